package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CouchDB's {@code _find} on the one index every database has, the special {@code _all_docs}:
 * documents are read in id order, design documents left out, and matched against the selector
 * in the scan's own transactions (a {@link Cursor}, so a long scan resumes in the next
 * transaction). This is what CouchDB does when no index fits a query, and it answers with the
 * same warning; sorting is possible on {@code _id} only, as there. JSON and text indexes
 * ({@code POST _index}) are not built yet.
 */
public final class Find {
    public static final String NO_INDEX_WARNING = "No matching index found, create an index to optimize query time.";
    private static final Set<String> KEYS = Set.of("selector", "limit", "skip", "sort", "fields", "r", "conflicts", "use_index", "bookmark",
            "update", "stable", "stale", "execution_stats", "allow_fallback", "partition");

    /**
     * A parsed request.
     *
     * @param fields dotted paths to keep, or null for whole documents
     * @param after the bookmark's document id: results start after it
     */
    public record Query(Selector selector, int limit, int skip, boolean descending, List<List<String>> fields, boolean conflicts,
                        String after, boolean executionStats, JsonNode useIndex) {}

    /** @param bookmark where the next page starts */
    public record Result(List<ObjectNode> docs, String bookmark, List<String> warnings, Stats stats) {}

    public record Stats(long docsExamined, long resultsReturned, double millis) {}

    private Find() {}

    /** Parses a {@code _find} body with CouchDB's errors. */
    public static Query parse(JsonNode body) {
        if (body == null || !body.isObject()) throw new MangoException("bad_request", "Request body must be a JSON object");
        for (Map.Entry<String, JsonNode> e : body.properties()) {
            if (!KEYS.contains(e.getKey())) throw new MangoException("invalid_key", "Invalid key " + e.getKey() + " for this request.");
        }
        JsonNode sel = body.get("selector");
        if (sel == null) throw new MangoException("missing_required_key", "Missing required key: selector");
        if (!sel.isObject()) throw new MangoException("invalid_selector_json", "Selector must be a JSON object, not: " + sel);
        Selector selector = Selector.parse(sel);
        int limit = nonNegative(body, "limit", 25);
        int skip = nonNegative(body, "skip", 0);
        boolean descending = sortDescending(body.get("sort"));
        List<List<String>> fields = null;
        JsonNode f = body.get("fields");
        if (f != null && !f.isNull()) {
            if (!f.isArray()) throw new MangoException("invalid_fields", "Fields must be an array of strings, not: " + f);
            fields = new ArrayList<>();
            for (JsonNode x : f) {
                if (!x.isTextual()) throw new MangoException("invalid_field", "Invalid JSON for field spec: " + x);
                fields.add(Selector.parseField(x.textValue()));
            }
            if (fields.isEmpty()) fields = null; // CouchDB: an empty list means the whole document
        }
        String after = null;
        JsonNode b = body.get("bookmark");
        if (b != null && !b.isNull() && !(b.isTextual() && (b.textValue().equals("nil") || b.textValue().isEmpty()))) {
            after = decodeBookmark(b);
        }
        return new Query(selector, limit, skip, descending, fields, flag(body, "conflicts"), after, flag(body, "execution_stats"), body.get("use_index"));
    }

    private static boolean flag(JsonNode body, String name) {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) return false;
        if (!v.isBoolean()) throw new MangoException("invalid_boolean", "Invalid boolean value: " + v);
        return v.booleanValue();
    }

    private static int nonNegative(JsonNode body, String name, int fallback) {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) return fallback;
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < 0) {
            throw new MangoException("invalid_non_neg_integer", v + " is not an integer greater than or equal to zero");
        }
        return v.intValue();
    }

    /** The special index sorts by {@code _id} only; any other field needs an index CouchDB would have to have. */
    private static boolean sortDescending(JsonNode sort) {
        if (sort == null || sort.isNull()) return false;
        if (!sort.isArray()) throw new MangoException("invalid_sort_json", "Sort must be an array of sort specs, not: " + sort);
        Boolean descending = null;
        for (JsonNode s : sort) {
            String field;
            String dir = "asc";
            if (s.isTextual()) {
                field = s.textValue();
            } else if (s.isObject() && s.size() == 1) {
                Map.Entry<String, JsonNode> e = s.properties().iterator().next();
                field = e.getKey();
                dir = e.getValue().asText();
                if (!dir.equals("asc") && !dir.equals("desc")) throw new MangoException("invalid_sort_dir", "Invalid sort direction: " + e.getValue());
            } else {
                throw new MangoException("invalid_sort_field", "Invalid sort field: " + s);
            }
            if (!field.equals("_id")) {
                throw new MangoException("no_usable_index", "No global index exists for this sort, try indexing by the sort fields.");
            }
            descending = dir.equals("desc");
        }
        return descending != null && descending;
    }

    static String encodeBookmark(String id) {
        ArrayNode a = Json.NODES.arrayNode().add(id);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(a.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String decodeBookmark(JsonNode b) {
        try {
            JsonNode a = Json.MAPPER.readTree(Base64.getUrlDecoder().decode(b.asText()));
            if (a.isArray() && a.size() == 1 && a.get(0).isTextual()) return a.get(0).textValue();
        } catch (Exception e) {
            // falls through to the error
        }
        throw new MangoException("invalid_bookmark", "Invalid bookmark value: " + b);
    }

    /** The one index every database has, as {@code GET _index} and {@code _explain} describe it. */
    public static ObjectNode specialIndex() {
        ObjectNode index = Json.NODES.objectNode();
        index.putNull("ddoc");
        index.put("name", "_all_docs");
        index.put("type", "special");
        index.putObject("def").putArray("fields").addObject().put("_id", "asc");
        return index;
    }

    /** CouchDB's {@code _explain} for {@code q}: the special index, the normalized selector, the options and the scan's range. */
    public static ObjectNode explain(String dbName, Query q, JsonNode body) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("dbname", dbName);
        out.set("index", specialIndex());
        out.put("partitioned", false);
        out.set("selector", q.selector().toJson());
        ObjectNode opts = out.putObject("opts");
        JsonNode use = body.get("use_index");
        opts.set("use_index", use == null || use.isNull() ? Json.NODES.arrayNode() : use);
        opts.put("bookmark", q.after() == null ? "nil" : encodeBookmark(q.after()));
        opts.put("limit", q.limit());
        opts.put("skip", q.skip());
        JsonNode sort = body.get("sort");
        opts.set("sort", sort == null || sort.isNull() ? Json.NODES.objectNode() : sort);
        JsonNode fields = body.get("fields");
        opts.set("fields", q.fields() == null ? Json.NODES.textNode("all_fields") : fields);
        opts.put("conflicts", q.conflicts());
        opts.put("execution_stats", q.executionStats());
        out.put("limit", q.limit());
        out.put("skip", q.skip());
        out.set("fields", q.fields() == null ? Json.NODES.textNode("all_fields") : fields);
        ObjectNode mr = out.putObject("mrargs");
        mr.put("include_docs", true);
        mr.put("view_type", "map");
        mr.put("reduce", false);
        mr.put("start_key", q.after());
        mr.putNull("end_key");
        mr.put("direction", q.descending() ? "rev" : "fwd");
        mr.put("conflicts", q.conflicts());
        out.put("covering", false);
        return out;
    }

    /** Runs {@code q} over the database's documents. */
    public static Result run(Database db, Query q) {
        long start = System.nanoTime();
        long[] examined = {0};
        String startKey = q.after();
        ScanProperties props = ScanProperties.of(q.descending(), (long) q.skip() + q.limit());
        Cursor<ObjectNode> cursor = db.allDocs(new Database.IdRange(startKey, null, true), props, null, (reader, row) -> {
            if (row.id().equals(startKey) || row.id().startsWith(DocumentJson.DESIGN_PREFIX)) return null;
            StoredDoc d;
            try {
                d = reader.get(row.id(), row.rev(), q.conflicts());
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.NOT_FOUND) return null; // removed since the row was read
                throw e;
            }
            examined[0]++;
            ObjectNode doc = DocumentJson.render(d);
            if (!q.selector().matches(doc)) return null; // on the document itself, without _conflicts
            return q.conflicts() ? DocumentJson.renderWithConflicts(d) : doc;
        });
        List<ObjectNode> out = new ArrayList<>();
        String last = null;
        int seen = 0;
        boolean more = q.limit() > 0;
        while (more && cursor.hasNext()) {
            ObjectNode doc = cursor.next();
            if (seen++ < q.skip()) continue;
            last = doc.get("_id").textValue();
            out.add(q.fields() == null ? doc : project(doc, q.fields()));
        }
        List<String> warnings = new ArrayList<>();
        warnings.add(NO_INDEX_WARNING);
        if (q.useIndex() != null && !q.useIndex().isNull()) {
            warnings.add(q.useIndex() + " was not used because it does not contain a valid index for this query.");
        }
        String bookmark = last != null ? encodeBookmark(last) : q.after() != null ? encodeBookmark(q.after()) : "nil";
        return new Result(out, bookmark, warnings, new Stats(examined[0], out.size(), (System.nanoTime() - start) / 1e6));
    }

    /** Only the named fields (dotted paths), nested as in the document; missing ones are left out. */
    static ObjectNode project(ObjectNode doc, List<List<String>> fields) {
        ObjectNode out = Json.NODES.objectNode();
        for (List<String> path : fields) {
            JsonNode v = doc;
            for (String p : path) {
                v = v != null && v.isObject() ? v.get(p) : null;
            }
            if (v == null) continue;
            ObjectNode at = out;
            for (int i = 0; i < path.size() - 1; i++) {
                JsonNode next = at.get(path.get(i));
                at = next instanceof ObjectNode o ? o : at.putObject(path.get(i));
            }
            at.set(path.getLast(), v.deepCopy());
        }
        return out;
    }
}
