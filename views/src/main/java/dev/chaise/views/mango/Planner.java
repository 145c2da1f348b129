package dev.chaise.views.mango;

import dev.chaise.views.collation.RawOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which index serves a query, decided as CouchDB 3.5 decides it ({@code mango_idx},
 * {@code mango_cursor}, {@code mango_idx_view}), so the same query uses the same index on both:
 *
 * <ol>
 *   <li>Candidates: the special index and every JSON index without a partial filter, plus those
 *       {@code use_index} names (a partial index is used only when named).
 *   <li>Usable: a JSON index when the selector requires each of its columns (seen through
 *       {@code $and}, and {@code $or} when every branch does; {@code _id} and sort fields need not
 *       be required), it is no text search, and the sort is a prefix of its columns once columns
 *       fixed by {@code $eq} are dropped. The special index is usable without a sort, or for a
 *       sort on {@code _id} when the selector narrows {@code _id}. None usable: 400
 *       {@code no_usable_index}.
 *   <li>{@code use_index}: if it names usable indexes, only they compete; otherwise the others do,
 *       with a warning (unless {@code allow_fallback} is false: 400 {@code invalid_index}).
 *   <li>JSON indexes beat the special one. Among them, the one whose leading columns cover the
 *       most of the selector's indexable fields, then the one with fewer columns, then by design
 *       document and name.
 * </ol>
 *
 * What CouchDB records along the way is kept for {@code _explain}'s {@code index_candidates}.
 */
final class Planner {
    private Planner() {}

    /** One index's place in the final sort: the ranges of its leading columns, and how many indexable fields it leaves out. */
    record Ranked(MangoIndex index, List<ColumnRange> prefix, int difference) {}

    /**
     * The decision and its trace.
     *
     * @param index null only for {@code _explain} when nothing is usable
     * @param ranges the chosen index's leading column ranges; a null element means the selector cannot match
     */
    record Choice(MangoIndex index, List<ColumnRange> ranges, List<MangoIndex> all, Set<MangoIndex> global, Set<MangoIndex> scope, Set<MangoIndex> usable,
                  Map<MangoIndex, List<String>> unusable, Set<MangoIndex> filtered, Set<MangoIndex> ofType, List<Ranked> ranked) {

        boolean empty() {
            return ranges != null && ranges.contains(null);
        }
    }

    /**
     * @param dbPartitioned whether the database is partitioned, for the reason of {@code no_usable_index}
     * @param partitionQuery whether the query keeps to a partition: then only partitioned JSON
     *     indexes are candidates, otherwise only global ones ({@code mango_idx:filter_partition_indexes})
     */
    static Choice choose(Selector selector, List<String> sortFields, UseIndex use, boolean allowFallback, List<JsonIndex> jsonIndexes,
                         boolean forExplain, boolean dbPartitioned, boolean partitionQuery) {
        List<MangoIndex> all = new ArrayList<>();
        all.add(MangoIndex.SPECIAL);
        for (JsonIndex j : jsonIndexes) all.add(new MangoIndex(j));
        Set<MangoIndex> global = new LinkedHashSet<>();
        for (MangoIndex i : all) if (!i.partial()) global.add(i);
        List<MangoIndex> named = byUseIndex(all, use);
        TreeSet<MangoIndex> candidates = new TreeSet<>(MangoIndex.ORDER);
        candidates.addAll(global);
        candidates.addAll(named);
        candidates.removeIf(i -> !i.special() && i.json().partitioned() != partitionQuery);
        Set<MangoIndex> scope = new LinkedHashSet<>(candidates);
        Set<MangoIndex> usable = new LinkedHashSet<>();
        Map<MangoIndex, List<String>> unusable = new LinkedHashMap<>();
        for (MangoIndex i : candidates) {
            List<String> reasons = reasons(i, selector, sortFields);
            if (reasons.isEmpty()) usable.add(i);
            else unusable.put(i, reasons);
        }
        if (usable.isEmpty() && !forExplain) {
            // mango_idx:mango_sort_error
            String which = !dbPartitioned ? "No index" : partitionQuery ? "No partitioned index" : "No global index";
            throw new MangoException("no_usable_index", which + " exists for this sort, try indexing by the sort fields.");
        }
        List<MangoIndex> filtered = byUseIndex(new ArrayList<>(usable), use);
        if (filtered.isEmpty()) {
            if (allowFallback || (!use.given() && usable.size() > 1)) {
                filtered = new ArrayList<>(usable);
            } else {
                throw invalidIndex(use);
            }
        }
        if (filtered.isEmpty()) {
            return new Choice(null, null, all, global, scope, usable, unusable, Set.of(), Set.of(), List.of());
        }
        // JSON indexes first: CouchDB's first cursor module with indexes serves the query.
        List<MangoIndex> ofType = filtered.stream().filter(i -> !i.special()).toList();
        if (ofType.isEmpty()) ofType = List.of(MangoIndex.SPECIAL);
        List<FieldRange> fieldRanges = fieldRanges(selector);
        if (ofType.getFirst().special()) {
            fieldRanges = new ArrayList<>(fieldRanges);
            fieldRanges.add(new FieldRange("_id", new ColumnRange("$gt", Json.NODES.nullNode(), "$lt", ColumnRange.MAX)));
        }
        List<Ranked> ranked = new ArrayList<>();
        for (MangoIndex i : ofType) {
            List<ColumnRange> prefix = prefix(i.columns(), fieldRanges);
            ranked.add(new Ranked(i, prefix, fieldRanges.size() - prefix.size()));
        }
        ranked.sort(Comparator.comparingInt(Ranked::difference).thenComparingInt((Ranked r) -> r.index().columns().size())
                .thenComparing(Ranked::index, MangoIndex.ORDER));
        Ranked best = ranked.getFirst();
        List<ColumnRange> ranges = selector.noopRange() ? java.util.Collections.singletonList(null) : best.prefix();
        return new Choice(best.index(), ranges, all, global, scope, usable, unusable, new LinkedHashSet<>(filtered), new LinkedHashSet<>(ofType), ranked);
    }

    static MangoException invalidIndex(UseIndex use) {
        if (!use.given()) return new MangoException("invalid_index", "You must specify an index with the `use_index` parameter.");
        String what = use.name() == null ? "_design/" + use.ddoc() : "_design/" + use.ddoc() + ", " + use.name();
        return new MangoException("invalid_index", what + " specified by `use_index` could not be found or it is not suitable.");
    }

    private static List<MangoIndex> byUseIndex(List<MangoIndex> indexes, UseIndex use) {
        if (!use.given()) return List.of();
        return indexes.stream().filter(i -> use.selects(i.ddoc(), i.name())).toList();
    }

    /** Why an index cannot serve the query; empty when it can ({@code is_usable}). */
    static List<String> reasons(MangoIndex i, Selector selector, List<String> sortFields) {
        List<String> reasons = new ArrayList<>();
        if (i.special()) {
            if (sortFields.isEmpty()) return reasons;
            if (!selector.indexableFields().contains("_id")) reasons.add("field_mismatch");
            if (!isPrefix(sortFields, MangoIndex.SPECIAL_COLUMNS)) reasons.add("sort_order_mismatch");
            return reasons;
        }
        List<String> columns = i.columns();
        TreeSet<String> required = new TreeSet<>(RawOrder::compareStrings);
        required.addAll(columns);
        sortFields.forEach(required::remove);
        required.remove("_id");
        required.remove("_rev");
        if (selector.isTextSearch()) reasons.add("needs_text_search");
        if (!selector.hasRequiredFields(new ArrayList<>(required))) reasons.add("field_mismatch");
        if (!canUseSort(columns, sortFields, selector)) reasons.add("sort_order_mismatch");
        return reasons;
    }

    /** The sort is a prefix of the columns once leading columns fixed by {@code $eq} are dropped. */
    static boolean canUseSort(List<String> columns, List<String> sortFields, Selector selector) {
        if (sortFields.isEmpty()) return true;
        for (int c = 0; c < columns.size(); c++) {
            if (columns.get(c).equals(sortFields.getFirst())) return isPrefix(sortFields, columns.subList(c, columns.size()));
            if (!selector.isConstantField(columns.get(c))) return false;
        }
        return false;
    }

    private static boolean isPrefix(List<String> prefix, List<String> list) {
        return prefix.size() <= list.size() && list.subList(0, prefix.size()).equals(prefix);
    }

    /** An indexable field and its range; a null range means the field cannot match. */
    record FieldRange(String field, ColumnRange range) {}

    /** {@code field_ranges}: stops at the first empty range, which it returns alone. */
    static List<FieldRange> fieldRanges(Selector selector) {
        List<FieldRange> out = new ArrayList<>();
        for (String f : selector.indexableFields()) {
            ColumnRange r = selector.range(f);
            if (r == null) return List.of(new FieldRange(f, null));
            out.add(new FieldRange(f, r));
        }
        return out;
    }

    /** The ranges of the index's leading columns that the selector narrows. */
    private static List<ColumnRange> prefix(List<String> columns, List<FieldRange> ranges) {
        List<ColumnRange> out = new ArrayList<>();
        for (String c : columns) {
            FieldRange found = null;
            for (FieldRange r : ranges) {
                if (r.field().equals(c)) {
                    found = r;
                    break;
                }
            }
            if (found == null) break;
            out.add(found.range());
        }
        return out;
    }

    // ---------------------------------------------------------------- _explain

    /** CouchDB 3.4's {@code index_candidates}: every index but the chosen one, with why it was not chosen. */
    static ArrayNode candidates(Choice c, List<String> fields) {
        Set<MangoIndex> partial = new LinkedHashSet<>(c.all());
        partial.removeAll(c.global());
        Set<MangoIndex> outOfScope = new LinkedHashSet<>(c.global());
        outOfScope.removeAll(c.scope());
        Set<MangoIndex> notUsable = new LinkedHashSet<>(c.unusable().keySet());
        Set<MangoIndex> excluded = new LinkedHashSet<>(c.usable());
        excluded.removeAll(c.filtered());
        Set<MangoIndex> unfavored = new LinkedHashSet<>(c.filtered());
        unfavored.removeAll(c.ofType());
        int unfavoredRank = Math.max(1, c.ranked().size());
        int excludedRank = unfavoredRank + (unfavored.isEmpty() ? 0 : 1);
        int notUsableRank = excludedRank + (excluded.isEmpty() ? 0 : 1);
        int outOfScopeRank = notUsableRank + (notUsable.isEmpty() ? 0 : 1);
        int partialRank = outOfScopeRank + (outOfScope.isEmpty() ? 0 : 1);

        record Tags(Boolean usable, List<String> reasons, int ranking) {}
        Map<MangoIndex, Tags> tags = new HashMap<>();
        java.util.function.BiConsumer<MangoIndex, Tags> add = (i, t) -> tags.merge(i, t, (a, b) -> {
            Boolean u = a.usable() == null ? b.usable() : b.usable() == null ? a.usable() : Boolean.valueOf(a.usable() && b.usable());
            List<String> r = new ArrayList<>(a.reasons());
            r.addAll(b.reasons());
            return new Tags(u, r, a.ranking() + b.ranking());
        });
        for (MangoIndex i : c.all()) tags.put(i, new Tags(null, List.of(), 0));
        partial.forEach(i -> add.accept(i, new Tags(false, List.of("is_partial"), partialRank)));
        outOfScope.forEach(i -> add.accept(i, new Tags(false, List.of("scope_mismatch"), outOfScopeRank)));
        notUsable.forEach(i -> add.accept(i, new Tags(false, List.of(), notUsableRank)));
        excluded.forEach(i -> add.accept(i, new Tags(true, List.of("excluded_by_user"), excludedRank)));
        unfavored.forEach(i -> add.accept(i, new Tags(true, List.of("unfavored_type"), unfavoredRank)));
        c.ofType().forEach(i -> add.accept(i, new Tags(true, List.of(), 0)));
        c.unusable().forEach((i, reasons) -> add.accept(i, new Tags(null, reasons, 0)));
        int winnerWidth = c.index() == null ? 0 : c.index().columns().size();
        for (int n = 0; n < c.ranked().size(); n++) {
            Ranked r = c.ranked().get(n);
            String reason = r.difference() > 0 ? "less_overlap" : r.index().columns().size() > winnerWidth ? "too_many_fields" : "alphabetically_comes_after";
            add.accept(r.index(), new Tags(null, List.of(reason), n));
        }
        if (c.index() != null) tags.remove(c.index());
        // Erlang folds its map in key order and prepends: the list comes out in reverse index order.
        List<MangoIndex> order = new ArrayList<>(tags.keySet());
        order.sort(MangoIndex.ORDER.reversed());
        ArrayNode out = Json.NODES.arrayNode();
        for (MangoIndex i : order) {
            Tags t = tags.get(i);
            ObjectNode e = out.addObject();
            e.set("index", i.toJson());
            ObjectNode a = e.putObject("analysis");
            a.put("usable", t.usable() != null && t.usable());
            ArrayNode rs = a.putArray("reasons");
            if (!t.reasons().isEmpty()) rs.addObject().put("name", t.reasons().getFirst());
            a.put("ranking", t.ranking());
            if (i.special()) a.putNull("covering");
            else a.put("covering", i.covers(fields));
        }
        return out;
    }

    /** CouchDB's {@code selector_hints}: which of the selector's fields a JSON index could narrow a scan by. */
    static ArrayNode selectorHints(Selector selector) {
        TreeSet<String> fields = new TreeSet<>(RawOrder::compareStrings);
        fields.addAll(selector.fields());
        List<String> indexable = selector.indexableFields();
        ArrayNode out = Json.NODES.arrayNode();
        ObjectNode h = out.addObject();
        h.put("type", "json");
        ArrayNode in = h.putArray("indexable_fields");
        indexable.forEach(in::add);
        ArrayNode un = h.putArray("unindexable_fields");
        for (String f : fields) if (!indexable.contains(f)) un.add(f);
        return out;
    }

    /** {@code start_key} of CouchDB's view query for the ranges (as {@code _explain}'s {@code mrargs} shows it). */
    static JsonNode startKey(MangoIndex index, List<ColumnRange> ranges) {
        if (index.special()) {
            ColumnRange r = ranges.getFirst();
            return ColumnRange.special(r.low()) ? Json.NODES.textNode("") : r.low();
        }
        ArrayNode key = Json.NODES.arrayNode();
        for (ColumnRange r : ranges) {
            if (ColumnRange.special(r.low())) break;
            key.add(r.low());
        }
        return key;
    }

    static JsonNode endKey(MangoIndex index, List<ColumnRange> ranges) {
        if (index.special()) {
            ColumnRange r = ranges.getFirst();
            return ColumnRange.special(r.high()) ? Json.NODES.textNode("<MAX>") : r.high();
        }
        ArrayNode key = Json.NODES.arrayNode();
        for (ColumnRange r : ranges) {
            if (ColumnRange.special(r.high())) {
                key.add("<MAX>");
                return key;
            }
            key.add(r.high());
        }
        key.add("<MAX>");
        return key;
    }
}
