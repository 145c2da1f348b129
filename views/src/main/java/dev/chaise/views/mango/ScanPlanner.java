package dev.chaise.views.mango;

import dev.chaise.views.collation.RawOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewKeyCodec;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The key ranges a JSON index is scanned over for a selector: the smallest set of disjoint ranges,
 * in index order, that holds every row whose document can match. Beyond CouchDB, which scans one
 * range from the comparisons under {@code $and}: {@code $in} and {@code $or} become several ranges
 * (apache/couchdb#1566, #5189), so a query with {@code $in} of ten values reads those ten keys.
 * Rows are still matched against the whole selector; the ranges only leave out rows that cannot
 * match, so they may be wider than needed but never narrower.
 *
 * <p>Each column's allowed values are a union of intervals of encoded values
 * ({@link ViewKeyCodec}, whose byte order is the view collation): {@code $eq} is a point,
 * {@code $gt}... an interval, {@code $beginsWith} the interval CouchDB uses (up to the prefix and
 * U+FFFF), {@code $in} its points plus every array (an array field matches {@code $in} by any
 * element, and its key is the whole array). {@code $and} intersects, {@code $or} unites (an
 * {@code $or} branch that does not narrow the column leaves it whole). Leading columns pinned to a
 * few points multiply into prefixes (at most {@link #MAX_RANGES} ranges); the first column that is
 * not, bounds each prefix's range, and later columns are left to the matcher. A column may mix
 * both ({@code $in} with an array value): its points go on narrowing, its intervals end there.
 *
 * <p>The {@code _id} column compares as Erlang terms ({@link RawOrder}), not by collation, so only
 * its points (strings) narrow a JSON index's scan; a comparison with a value of another type
 * selects all ids or none.
 */
final class ScanPlanner {
    static final int MAX_RANGES = 1000;
    private static final byte ARRAY = 0x09;
    private static final byte OBJECT = 0x0A;
    private static final byte[] TOP = {(byte) 0xFF};

    private static final Comparator<byte[]> BYTES = Arrays::compareUnsigned;

    private ScanPlanner() {}

    /** A key range {@code [begin, end)} of encoded keys, with what it stands for in JSON, for {@code _explain}. */
    record KeyRange(byte[] begin, byte[] end, ObjectNode describe) {}

    /** One bound of an interval of encoded values: null for open. */
    record Interval(byte[] lo, boolean loInclusive, byte[] hi, boolean hiInclusive, JsonNode loValue, JsonNode hiValue) {
        boolean point() {
            return lo != null && hi != null && loInclusive && hiInclusive && Arrays.equals(lo, hi);
        }

        /** Where it starts as an exclusive-end key range suffix: the value, or just past it. */
        byte[] begin() {
            if (lo == null) return new byte[0];
            return loInclusive ? lo : concat(lo, TOP);
        }

        /** Exclusive end; null for open. */
        byte[] end() {
            if (hi == null) return null;
            return hiInclusive ? concat(hi, TOP) : hi;
        }
    }

    /** The values one column may take: a sorted union of disjoint intervals; {@link #ALL} unconstrained. */
    record Values(List<Interval> intervals) {
        static final Values ALL = new Values(List.of(new Interval(null, false, null, false, null, null)));
        static final Values NONE = new Values(List.of());

        boolean all() {
            return intervals.size() == 1 && intervals.getFirst().lo() == null && intervals.getFirst().hi() == null;
        }

        boolean points() {
            return !intervals.isEmpty() && intervals.stream().allMatch(Interval::point);
        }
    }

    /** The ranges of sort keys to read, in index order; empty when no document can match. */
    static List<KeyRange> plan(Selector selector, List<String> columns) {
        if (selector.noopRange()) return List.of();
        // Prefixes still open to narrowing by the next column, each with the values it stands for.
        List<byte[]> open = new ArrayList<>();
        List<ArrayNode> openValues = new ArrayList<>();
        open.add(new byte[] {ARRAY});
        openValues.add(Json.NODES.arrayNode());
        List<KeyRange> out = new ArrayList<>();
        for (String column : columns) {
            if (open.isEmpty()) break;
            Values v = selector.root() == null ? Values.ALL : values(selector.root(), column);
            if (v.all() || (long) open.size() * v.intervals().size() + out.size() > MAX_RANGES) break;
            List<byte[]> next = new ArrayList<>();
            List<ArrayNode> nextValues = new ArrayList<>();
            for (int p = 0; p < open.size(); p++) {
                for (Interval i : v.intervals()) {
                    if (i.point()) {
                        // A pinned value: the next column may narrow further.
                        next.add(concat(open.get(p), i.lo()));
                        nextValues.add(openValues.get(p).deepCopy().add(i.loValue()));
                    } else {
                        out.add(range(open.get(p), openValues.get(p), i));
                    }
                }
            }
            open = next;
            openValues = nextValues;
        }
        for (int p = 0; p < open.size(); p++) {
            ObjectNode d = Json.NODES.objectNode();
            d.set("start_key", openValues.get(p));
            d.put("inclusive_start", true);
            d.set("end_key", openValues.get(p).deepCopy().add("<MAX>"));
            d.put("inclusive_end", true);
            out.add(new KeyRange(open.get(p), concat(open.get(p), TOP), d));
        }
        out.sort((a, b) -> BYTES.compare(a.begin(), b.begin())); // disjoint, so this is index order
        return out;
    }

    /** The keys under {@code prefix} whose next column lies in {@code i}. */
    private static KeyRange range(byte[] prefix, ArrayNode values, Interval i) {
        byte[] end = i.end();
        ObjectNode d = Json.NODES.objectNode();
        d.set("start_key", values.deepCopy().add(i.loValue() == null ? Json.NODES.textNode("<MIN>") : i.loValue()));
        d.put("inclusive_start", i.lo() == null || i.loInclusive());
        d.set("end_key", values.deepCopy().add(i.hiValue() == null ? Json.NODES.textNode("<MAX>") : i.hiValue()));
        d.put("inclusive_end", i.hi() == null || i.hiInclusive());
        return new KeyRange(concat(prefix, i.begin()), concat(prefix, end == null ? TOP : end), d);
    }

    /** The values {@code column} can have in a document the node matches. */
    static Values values(Selector.Node n, String column) {
        return values(n, column, false);
    }

    /**
     * @param raw {@code _id} in the special index, whose order is Erlang's: values are encoded as
     *     their UTF-8 bytes (ids are strings, and byte order is then Erlang's order of binaries)
     */
    private static Values values(Selector.Node n, String column, boolean raw) {
        return switch (n) {
            case Selector.And a -> {
                Values v = Values.ALL;
                for (Selector.Node x : a.args()) {
                    v = intersect(v, values(x, column, raw));
                    if (v.intervals().isEmpty()) break;
                }
                yield v;
            }
            case Selector.Or o -> {
                if (o.args().isEmpty()) yield Values.ALL; // an empty $or matches everything
                List<Interval> all = new ArrayList<>();
                for (Selector.Node x : o.args()) {
                    Values v = values(x, column, raw);
                    if (v.all()) yield Values.ALL;
                    all.addAll(v.intervals());
                }
                yield union(all);
            }
            case Selector.Field f when f.name().equals(column) && f.cond() instanceof Selector.Op op -> raw ? rawIdOp(op) : op(op, column.equals("_id"));
            default -> Values.ALL;
        };
    }

    private static Values op(Selector.Op op, boolean id) {
        JsonNode arg = op.arg();
        if (id) return idOp(op);
        return switch (op.op()) {
            case "$eq" -> point(arg);
            case "$gt" -> new Values(List.of(new Interval(enc(arg), false, null, false, arg, null)));
            case "$gte" -> new Values(List.of(new Interval(enc(arg), true, null, false, arg, null)));
            case "$lt" -> new Values(List.of(new Interval(null, false, enc(arg), false, null, arg)));
            case "$lte" -> new Values(List.of(new Interval(null, false, enc(arg), true, null, arg)));
            case "$beginsWith" -> {
                JsonNode hi = Json.NODES.textNode(arg.textValue() + "\uFFFF");
                yield new Values(List.of(new Interval(enc(arg), true, enc(hi), true, arg, hi)));
            }
            case "$in" -> {
                List<Interval> parts = new ArrayList<>();
                for (JsonNode v : arg) if (!v.isArray()) parts.addAll(point(v).intervals());
                if (!arg.isEmpty()) parts.add(new Interval(new byte[] {ARRAY}, true, new byte[] {OBJECT}, false, Json.NODES.arrayNode(), Json.NODES.objectNode()));
                yield union(parts);
            }
            case "$exists" -> arg.booleanValue() ? Values.ALL : Values.NONE; // every row of the index has every column
            default -> Values.ALL;
        };
    }

    /** {@code _id} in a JSON index: ids are strings; only equality with a string maps onto the collated key order. */
    private static Values idOp(Selector.Op op) {
        JsonNode arg = op.arg();
        return switch (op.op()) {
            case "$eq" -> arg.isTextual() ? point(arg) : Values.NONE;
            case "$in" -> {
                List<Interval> parts = new ArrayList<>();
                for (JsonNode v : arg) if (v.isTextual()) parts.addAll(point(v).intervals());
                yield union(parts);
            }
            // Strings rank above every other type: a bound of another type lets all ids through, or none.
            case "$gt", "$gte" -> Values.ALL;
            case "$lt", "$lte" -> arg.isTextual() ? Values.ALL : Values.NONE;
            case "$exists" -> op.arg().booleanValue() ? Values.ALL : Values.NONE;
            default -> Values.ALL;
        };
    }

    /** A span of document ids for the special index: null ends are open; the start is always inclusive (the matcher drops an excluded first id). */
    record IdSpan(String start, String end, boolean inclusiveEnd) {}

    /** The id spans of the special index to read, in id order; empty when no document can match. */
    static List<IdSpan> planIds(Selector selector) {
        if (selector.noopRange()) return List.of();
        Values v = selector.root() == null ? Values.ALL : values(selector.root(), "_id", true);
        List<IdSpan> out = new ArrayList<>();
        for (Interval i : v.intervals()) {
            out.add(new IdSpan(i.lo() == null ? null : utf8(i.lo()), i.hi() == null ? null : utf8(i.hi()), i.hiInclusive()));
        }
        return out;
    }

    private static String utf8(byte[] b) {
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** {@code _id} in Erlang's order, over UTF-8 bytes: strings sort after every other type. */
    private static Values rawIdOp(Selector.Op op) {
        JsonNode arg = op.arg();
        boolean text = arg.isTextual();
        return switch (op.op()) {
            case "$eq" -> text ? rawPoint(arg.textValue()) : Values.NONE;
            case "$in" -> {
                List<Interval> parts = new ArrayList<>();
                for (JsonNode x : arg) if (x.isTextual()) parts.addAll(rawPoint(x.textValue()).intervals());
                yield union(parts);
            }
            case "$gt", "$gte" -> text ? new Values(List.of(new Interval(utf8(arg.textValue()), op.op().equals("$gte"), null, false, arg, null))) : Values.ALL;
            case "$lt", "$lte" -> text ? new Values(List.of(new Interval(null, false, utf8(arg.textValue()), op.op().equals("$lte"), null, arg))) : Values.NONE;
            case "$beginsWith" -> {
                String after = successor(arg.textValue());
                yield new Values(List.of(new Interval(utf8(arg.textValue()), true, after == null ? null : utf8(after), false, arg,
                        after == null ? null : Json.NODES.textNode(after))));
            }
            case "$exists" -> arg.booleanValue() ? Values.ALL : Values.NONE;
            default -> Values.ALL;
        };
    }

    private static Values rawPoint(String id) {
        byte[] b = utf8(id);
        return new Values(List.of(new Interval(b, true, b, true, Json.NODES.textNode(id), Json.NODES.textNode(id))));
    }

    /** The first string after every string that starts with {@code prefix}, in code point order; null if there is none. */
    static String successor(String prefix) {
        int[] cps = prefix.codePoints().toArray();
        for (int i = cps.length - 1; i >= 0; i--) {
            int next = cps[i] + 1;
            if (next >= Character.MIN_SURROGATE && next <= Character.MAX_SURROGATE) next = Character.MAX_SURROGATE + 1;
            if (next <= Character.MAX_CODE_POINT) {
                int[] out = Arrays.copyOf(cps, i + 1);
                out[i] = next;
                return new String(out, 0, out.length);
            }
        }
        return null;
    }

    private static Values point(JsonNode v) {
        byte[] e = enc(v);
        return new Values(List.of(new Interval(e, true, e, true, v, v)));
    }

    static byte[] enc(JsonNode v) {
        return ViewKeyCodec.encode(v);
    }


    /** Compares lower bounds: open first, then by value, inclusive before exclusive. */
    private static int compareLo(Interval a, Interval b) {
        if (a.lo() == null || b.lo() == null) return a.lo() == null ? (b.lo() == null ? 0 : -1) : 1;
        int c = BYTES.compare(a.lo(), b.lo());
        return c != 0 ? c : Boolean.compare(!a.loInclusive(), !b.loInclusive());
    }

    /** Compares upper bounds: by value, exclusive before inclusive, open last. */
    private static int compareHi(Interval a, Interval b) {
        if (a.hi() == null || b.hi() == null) return a.hi() == null ? (b.hi() == null ? 0 : 1) : -1;
        int c = BYTES.compare(a.hi(), b.hi());
        return c != 0 ? c : Boolean.compare(a.hiInclusive(), b.hiInclusive());
    }

    /** Whether the interval holds no value. */
    private static boolean emptyInterval(Interval i) {
        if (i.lo() == null || i.hi() == null) return false;
        int c = BYTES.compare(i.lo(), i.hi());
        return c > 0 || (c == 0 && !(i.loInclusive() && i.hiInclusive()));
    }

    private static Values intersect(Values a, Values b) {
        if (a.all()) return b;
        if (b.all()) return a;
        List<Interval> out = new ArrayList<>();
        for (Interval x : a.intervals()) {
            for (Interval y : b.intervals()) {
                Interval lo = compareLo(x, y) >= 0 ? x : y;
                Interval hi = compareHi(x, y) <= 0 ? x : y;
                Interval i = new Interval(lo.lo(), lo.loInclusive(), hi.hi(), hi.hiInclusive(), lo.loValue(), hi.hiValue());
                if (!emptyInterval(i)) out.add(i);
            }
        }
        return union(out);
    }

    /** Sorted, overlapping or touching intervals merged. */
    private static Values union(List<Interval> parts) {
        List<Interval> sorted = new ArrayList<>(parts);
        sorted.removeIf(ScanPlanner::emptyInterval);
        sorted.sort(ScanPlanner::compareLo);
        List<Interval> out = new ArrayList<>();
        for (Interval i : sorted) {
            if (out.isEmpty()) {
                out.add(i);
                continue;
            }
            Interval last = out.getLast();
            if (overlapsOrTouches(last, i)) {
                Interval hi = compareHi(last, i) >= 0 ? last : i;
                out.set(out.size() - 1, new Interval(last.lo(), last.loInclusive(), hi.hi(), hi.hiInclusive(), last.loValue(), hi.hiValue()));
            } else {
                out.add(i);
            }
        }
        return new Values(out);
    }

    /** {@code b} starts no later than {@code a} ends (b starts at or after a does). */
    private static boolean overlapsOrTouches(Interval a, Interval b) {
        if (a.hi() == null || b.lo() == null) return true;
        int c = BYTES.compare(b.lo(), a.hi());
        return c < 0 || (c == 0 && (a.hiInclusive() || b.loInclusive()));
    }

    static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(a.length + b.length);
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }
}
