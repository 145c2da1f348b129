package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewCollation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A user's {@code _find} in a per-document access database ({@link SecuredDb#limitedByAccess}):
 * the selector over the documents they may read, listed by {@link SecuredDb#accessibleDocs} (the
 * union of their name's and roles' ranges of the database's access listings), never an index,
 * whose rows would be everyone's documents. Its cost is proportional to the user's documents.
 *
 * <p>Results come in id order, or sorted in memory by {@code sort}: documents are compared by
 * the sort fields' values in view collation, then by id, all in one direction, and a document
 * that lacks a sort field is left out, as a JSON index on those fields would leave it out. Only
 * {@code skip + limit} documents are held at a time. In id order the scan stops when that many
 * have matched; a sort by other fields reads all the user's documents. The bookmark is the last
 * document's position in that order (its sort values and id), so the next page starts after it
 * whatever was written meanwhile.
 */
final class OwnDocsScan {
    /** Documents read per transaction. */
    private static final int BATCH = 64;
    /** The bookmark's index tag: no index, the user's own documents. */
    static final byte[] TAG = Arrays.copyOf(IndexNames.sha1("_access".getBytes(StandardCharsets.UTF_8)), 8);

    private final SecuredDb db;
    private final Find.Query q;
    /** The sort's fields as paths, or empty for id order. */
    private final List<List<String>> sortPaths;
    private final Comparator<Entry> order;
    private final boolean idOrder;
    long keys;
    long docs;
    long quorumDocs;
    long evaluated;

    /** A matching document and its place in the order. */
    private record Entry(ObjectNode doc, List<JsonNode> sortValues, String id) {}

    OwnDocsScan(SecuredDb db, Find.Query q) {
        this.db = db;
        this.q = q;
        List<List<String>> paths = new ArrayList<>();
        for (Sort.Field f : q.sort()) paths.add(Selector.parseField(f.name()));
        this.idOrder = paths.stream().allMatch(p -> p.equals(List.of("_id")));
        this.sortPaths = idOrder ? List.of() : paths;
        Comparator<Entry> asc = (a, b) -> {
            for (int i = 0; i < a.sortValues().size(); i++) {
                int c = ViewCollation.compare(a.sortValues().get(i), b.sortValues().get(i));
                if (c != 0) return c;
            }
            return Arrays.compareUnsigned(a.id().getBytes(StandardCharsets.UTF_8), b.id().getBytes(StandardCharsets.UTF_8));
        };
        this.order = q.descending() ? asc.reversed() : asc;
    }

    /** The results: the page's documents (as the user may see them, cut to {@code fields}) and the bookmark after it, null if nothing matched. */
    record Page(List<ObjectNode> docs, String bookmark) {}

    Page run(Bookmark from) {
        Entry after = from == null ? null : position(from);
        long want = q.limit() == 0 ? 0 : (long) q.skip() + q.limit();
        // The first `want` matches in the order, held as a heap whose head is the last of them.
        PriorityQueue<Entry> kept = new PriorityQueue<>(order.reversed());
        String prefix = q.partition() == null ? "" : q.partition() + ":";
        List<DocInfo> listed = new ArrayList<>();
        for (DocInfo d : db.accessibleDocs()) if (!d.deleted() && d.id().startsWith(prefix)) listed.add(d);
        if (q.descending() && idOrder) java.util.Collections.reverse(listed);
        for (int at = 0; at < listed.size() && want > 0; at += BATCH) {
            if (idOrder && kept.size() >= want) break; // read in the result's order: nothing later can come first
            List<String> ids = listed.subList(at, Math.min(at + BATCH, listed.size())).stream().map(DocInfo::id).toList();
            keys += ids.size();
            List<StoredDoc> read = db.database().read(r -> r.winners(ids, null, q.conflicts()));
            for (StoredDoc d : read) {
                Entry e = d == null ? null : match(d);
                if (e == null || after != null && order.compare(e, after) <= 0) continue;
                kept.add(e);
                if (kept.size() > want) kept.poll();
            }
        }
        List<Entry> page = new ArrayList<>(kept);
        page.sort(order);
        List<ObjectNode> out = new ArrayList<>();
        for (int i = q.skip(); i < page.size(); i++) out.add(q.fields() == null ? page.get(i).doc() : Find.project(page.get(i).doc(), q.fields()));
        return new Page(out, page.isEmpty() ? null : bookmark(page.getLast()));
    }

    /** The document as this user may see it, if it matches and has every sort field; else null. */
    private Entry match(StoredDoc d) {
        if (q.r() > 1) quorumDocs++;
        else docs++;
        ObjectNode doc = db.visibleOrNull(q.conflicts() ? DocumentJson.renderWithConflicts(d) : DocumentJson.render(d));
        if (doc == null) return null; // its _access changed since it was listed
        evaluated++;
        if (!q.selector().matches(doc)) return null;
        List<JsonNode> values = new ArrayList<>(sortPaths.size());
        for (List<String> p : sortPaths) {
            JsonNode v = Selector.get(doc, p);
            if (v == null) return null;
            values.add(v);
        }
        return new Entry(doc, values, d.id());
    }

    private String bookmark(Entry last) {
        ArrayNode a = Json.NODES.arrayNode();
        last.sortValues().forEach(a::add);
        a.add(last.id());
        return new Bookmark(TAG, 0, a.toString().getBytes(StandardCharsets.UTF_8)).encode();
    }

    /** Where a bookmark of this kind of scan stopped; {@code invalid_bookmark} for any other, an index's included. */
    private Entry position(Bookmark b) {
        if (!Arrays.equals(b.index(), TAG) || b.range() != 0) throw Bookmark.invalid(q.bookmark());
        JsonNode a;
        try {
            a = Json.MAPPER.readTree(b.continuation());
        } catch (IOException e) {
            throw Bookmark.invalid(q.bookmark());
        }
        if (a == null || !a.isArray() || a.size() != sortPaths.size() + 1 || !a.get(sortPaths.size()).isTextual()) throw Bookmark.invalid(q.bookmark());
        List<JsonNode> values = new ArrayList<>();
        for (int i = 0; i < sortPaths.size(); i++) values.add(a.get(i));
        return new Entry(null, values, a.get(sortPaths.size()).textValue());
    }
}
