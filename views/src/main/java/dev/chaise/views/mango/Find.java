package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Partitions;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@code _find} (and {@code _explain}) request, validated in the order and with the errors of
 * CouchDB 3.5's {@code mango_opts:validate_find}, and the pieces of the answer that do not
 * depend on storage. {@link Mango} runs it.
 */
public final class Find {
    public static final String NO_INDEX_WARNING = "No matching index found, create an index to optimize query time.";
    static final String SCAN_WARNING = "The number of documents examined is high in proportion to the number of results returned. "
            + "Consider adding a more specific index to improve this.";

    /**
     * A parsed request.
     *
     * @param bookmark as given, or null for none
     * @param fields dotted paths to keep, or null for whole documents
     */
    public record Query(Selector selector, UseIndex useIndex, String bookmark, int limit, int skip, List<Sort.Field> sort,
                        List<String> fields, int r, boolean conflicts, boolean staleOk, boolean update, boolean stable,
                        boolean executionStats, boolean allowFallback, String partition) {

        boolean descending() {
            return Sort.descending(sort);
        }

        /** Whether the index is read as it is ({@code update: false}, or {@code stale: "ok"}). */
        boolean readAsIs() {
            return !update || staleOk;
        }

        /** Every field a row must provide: the requested ones and those the selector looks at ({@code required_fields}); null for all. */
        List<String> requiredFields() {
            if (fields == null) return null;
            List<String> out = new ArrayList<>(fields);
            for (String f : selector.fields()) if (!out.contains(f)) out.add(f);
            return out;
        }
    }

    /** @param bookmark where the next page starts */
    public record Result(List<ObjectNode> docs, String bookmark, List<String> warnings, Stats stats) {}

    public record Stats(long keysExamined, long docsExamined, long quorumDocsExamined, long resultsReturned, double millis) {}

    private Find() {}

    /** Parses a {@code _find} body with CouchDB's errors, in CouchDB's order: each option in turn, unknown members last. */
    public static Query parse(JsonNode body) {
        if (body == null || !body.isObject()) throw new MangoException("bad_request", "Request body must be a JSON object");
        Map<String, JsonNode> rest = new HashMap<>();
        body.properties().forEach(e -> rest.put(e.getKey(), e.getValue()));
        JsonNode sel = rest.remove("selector");
        if (sel == null) throw new MangoException("missing_required_key", "Missing required key: selector");
        if (!sel.isObject()) throw new MangoException("invalid_selector_json", "Selector must be a JSON object, not: " + sel);
        Selector selector = Selector.parse(sel);
        UseIndex use = UseIndex.parse(rest.remove("use_index"));
        String bookmark = null;
        JsonNode b = rest.remove("bookmark");
        if (b != null && !b.isNull()) {
            if (!b.isTextual()) throw new MangoException("invalid_bookmark", "Invalid bookmark value: " + b);
            bookmark = b.textValue().isEmpty() ? null : b.textValue();
        }
        int limit = nonNegative(rest.remove("limit"), 25);
        int skip = nonNegative(rest.remove("skip"), 0);
        JsonNode s = rest.remove("sort");
        List<Sort.Field> sort = s == null ? List.of() : Sort.parse(s);
        List<String> fields = fields(rest.remove("fields"));
        JsonNode p = rest.remove("partition");
        String partition = null; // mango_opts:validate_partition: "" is none
        if (p != null && !(p.isTextual() && p.textValue().isEmpty())) {
            if (!p.isTextual()) throw new StorageException(StorageException.Kind.ILLEGAL_PARTITION, "Partition must be a string");
            partition = p.textValue();
            Partitions.validatePartition(partition);
        }
        JsonNode rNode = rest.remove("r");
        int r = 1;
        if (rNode != null) {
            if (!rNode.isIntegralNumber() || rNode.bigIntegerValue().signum() <= 0) {
                throw new MangoException("invalid_pos_integer", rNode + " is not an integer greater than zero");
            }
            r = rNode.canConvertToInt() ? rNode.intValue() : Integer.MAX_VALUE;
        }
        boolean conflicts = bool(rest.remove("conflicts"), false);
        JsonNode stale = rest.remove("stale");
        boolean staleOk = false;
        if (stale != null) {
            if (stale.isTextual() && stale.textValue().equals("ok")) staleOk = true;
            else if (!(stale.isBoolean() && !stale.booleanValue()) && !(stale.isTextual() && stale.textValue().equals("false"))) {
                throw new MangoException("invalid_ok_or_false_value", "Invalid value for stale: " + stale + ", should be \"ok\" or false");
            }
        }
        boolean update = bool(rest.remove("update"), true);
        boolean stable = bool(rest.remove("stable"), false);
        boolean stats = bool(rest.remove("execution_stats"), false);
        boolean fallback = bool(rest.remove("allow_fallback"), true);
        if (!rest.isEmpty()) {
            // The first unknown member in the body's order.
            for (Map.Entry<String, JsonNode> e : body.properties()) {
                if (rest.containsKey(e.getKey())) throw new MangoException("invalid_key", "Invalid key " + e.getKey() + " for this request.");
            }
        }
        return new Query(selector, use, bookmark, limit, skip, sort, fields, r, conflicts, staleOk, update, stable, stats, fallback, partition);
    }

    private static boolean bool(JsonNode v, boolean fallback) {
        if (v == null) return fallback;
        if (!v.isBoolean()) throw new MangoException("invalid_boolean", "Invalid boolean value: " + v);
        return v.booleanValue();
    }

    private static int nonNegative(JsonNode v, int fallback) {
        if (v == null) return fallback;
        if (!v.isIntegralNumber() || v.bigIntegerValue().signum() < 0) {
            throw new MangoException("invalid_non_neg_integer", v + " is not an integer greater than or equal to zero");
        }
        return v.canConvertToInt() ? v.intValue() : Integer.MAX_VALUE;
    }

    /** {@code mango_fields}: a list of field names; an empty list means the whole document. */
    private static List<String> fields(JsonNode f) {
        if (f == null) return null;
        if (!f.isArray()) throw new MangoException("invalid_fields", "Fields must be an array of strings, not: " + f);
        List<String> out = new ArrayList<>();
        for (JsonNode x : f) {
            if (!x.isTextual()) throw new MangoException("invalid_field", "Invalid JSON for field spec: " + x);
            Selector.parseField(x.textValue()); // an empty segment is CouchDB's invalid_field_name
            out.add(x.textValue());
        }
        return out.isEmpty() ? null : List.copyOf(out);
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

    /** Only the named fields (dotted paths), nested as in the document; missing ones are left out ({@code mango_fields:extract}). */
    static ObjectNode project(ObjectNode doc, List<String> fields) {
        ObjectNode out = Json.NODES.objectNode();
        for (String field : fields) {
            List<String> path = Selector.parseField(field);
            JsonNode v = Selector.get(doc, path);
            if (v != null) set(out, path, v.deepCopy());
        }
        return out;
    }

    /** Sets a value at a path of object members, making the objects on the way ({@code mango_doc:set_field}). */
    static void set(ObjectNode doc, List<String> path, JsonNode value) {
        ObjectNode at = doc;
        for (int i = 0; i < path.size() - 1; i++) {
            JsonNode next = at.get(path.get(i));
            at = next instanceof ObjectNode o ? o : at.putObject(path.get(i));
        }
        at.set(path.getLast(), value);
    }

    /** {@code _explain}'s {@code opts}: every option with its value or default, in CouchDB's order. */
    static ObjectNode opts(Query q) {
        ObjectNode o = Json.NODES.objectNode();
        ArrayNode use = o.putArray("use_index");
        q.useIndex().toList().forEach(use::add);
        o.put("bookmark", q.bookmark() == null ? "nil" : q.bookmark());
        o.put("limit", q.limit());
        o.put("skip", q.skip());
        o.set("sort", Sort.toJson(q.sort()));
        o.set("fields", fieldsJson(q.fields()));
        o.put("partition", q.partition() == null ? "" : q.partition());
        o.put("r", q.r());
        o.put("conflicts", q.conflicts());
        if (q.staleOk()) o.put("stale", "ok");
        else o.put("stale", false);
        o.put("update", q.update());
        o.put("stable", q.stable());
        o.put("execution_stats", q.executionStats());
        o.put("allow_fallback", q.allowFallback());
        return o;
    }

    static ArrayNode fieldsJson(List<String> fields) {
        ArrayNode a = Json.NODES.arrayNode();
        if (fields != null) fields.forEach(a::add);
        return a;
    }
}
