package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One Mango JSON index: a view of a {@code "language": "query"} design document, stored as CouchDB
 * stores it,
 *
 * <pre>
 * "views": { "by-type": {
 *     "map": {"fields": {"type": "asc", "score": "asc"}, "partial_filter_selector": {...}},
 *     "reduce": "_count",
 *     "options": {"def": {"fields": ["type", "score"]}} } }
 * </pre>
 *
 * Its rows are emitted in Java ({@link MangoMapProgram}): a document with every column emits one
 * row, key the array of its column values, value null.
 *
 * <p><b>Column order.</b> CouchDB takes it from {@code map.fields}, an object, relying on member
 * order. Chaise's storage (RFC A) returns members in key order, so the order is taken from
 * {@code options.def.fields}, the array the index was created with, which CouchDB writes too;
 * only a design document without it (written by hand) falls back to {@code map.fields} as stored.
 *
 * @param columns field names as Mango spells them (dots for nesting)
 * @param partialFilter the stored {@code partial_filter_selector}, or null when there is none
 * @param partitioned whether its rows are kept per partition: the design document's
 *     {@code options.partitioned}, by default the database's flag ({@code mango_idx:get_idx_partitioned})
 */
public record JsonIndex(String ddoc, String name, List<String> columns, List<String> directions, JsonNode partialFilter,
                        Selector partial, boolean partitioned) {

    /**
     * The JSON indexes of a design document, in view name order; views Mango cannot read are left out, as CouchDB does.
     *
     * @param dbPartitioned whether the database is partitioned
     */
    public static List<JsonIndex> fromDesignDoc(String ddocId, JsonNode body, boolean dbPartitioned) {
        List<JsonIndex> out = new ArrayList<>();
        if (!DesignDoc.QUERY.equals(body.path("language").asText(null))) return out;
        JsonNode views = body.get("views");
        if (views == null || !views.isObject()) return out;
        List<String> names = new ArrayList<>();
        views.fieldNames().forEachRemaining(names::add);
        names.sort(null); // view ids follow name order (DesignDoc)
        JsonNode option = body.path("options").path("partitioned");
        boolean partitioned = DesignDoc.partitioned(option.isBoolean() ? option.booleanValue() : null, dbPartitioned);
        for (String name : names) {
            JsonIndex i = fromView(ddocId, name, views.get(name), partitioned);
            if (i != null) out.add(i);
        }
        return out;
    }

    /** One view as a JSON index, or null if it is not one Mango can use. */
    static JsonIndex fromView(String ddocId, String name, JsonNode view, boolean partitioned) {
        if (!view.isObject() || !view.path("map").isObject()) return null;
        JsonNode map = view.get("map");
        JsonNode fields = map.get("fields");
        if (fields == null || !fields.isObject()) return null;
        List<String> columns = new ArrayList<>();
        List<String> dirs = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : fields.properties()) {
            String dir = e.getValue().asText("");
            if (e.getKey().isEmpty() || !(dir.equals("asc") || dir.equals("desc"))) return null;
            columns.add(e.getKey());
            dirs.add(dir);
        }
        List<String> ordered = declaredOrder(view.path("options").path("def").path("fields"));
        if (ordered != null && Set.copyOf(ordered).equals(Set.copyOf(columns)) && ordered.size() == columns.size()) {
            List<String> d = new ArrayList<>();
            for (String c : ordered) d.add(dirs.get(columns.indexOf(c)));
            columns = ordered;
            dirs = d;
        }
        JsonNode pfs = map.get("partial_filter_selector");
        if (pfs == null || (pfs.isObject() && pfs.isEmpty())) pfs = map.get("selector"); // the legacy name
        if (pfs != null && (pfs.isNull() || (pfs.isObject() && pfs.isEmpty()))) pfs = null;
        Selector partial = null;
        if (pfs != null) {
            try {
                partial = Selector.parse(pfs);
            } catch (MangoException e) {
                return null;
            }
        }
        return new JsonIndex(ddocId, name, List.copyOf(columns), List.copyOf(dirs), pfs, partial, partitioned);
    }

    /** The field names of a request's {@code index.fields}, in order, or null if it is not a list of sort specs. */
    private static List<String> declaredOrder(JsonNode fields) {
        if (!fields.isArray()) return null;
        List<String> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (JsonNode f : fields) {
            String n;
            if (f.isTextual()) n = f.textValue();
            else if (f.isObject() && f.size() == 1) n = f.fieldNames().next();
            else return null;
            if (!seen.add(n)) return null;
            out.add(n);
        }
        return out;
    }

    public boolean isPartial() {
        return partial != null;
    }

    /** {@code def} as {@code GET _index} and {@code _explain} show it: fields as a list of single-member objects. */
    public ObjectNode def() {
        ObjectNode def = Json.NODES.objectNode();
        ArrayNode f = def.putArray("fields");
        for (int i = 0; i < columns.size(); i++) f.addObject().put(columns.get(i), directions.get(i));
        if (partialFilter != null) def.set("partial_filter_selector", partialFilter);
        return def;
    }

    /** The index as {@code GET _index} lists it (CouchDB 3.5's shape). */
    public ObjectNode toJson() {
        ObjectNode o = Json.NODES.objectNode();
        o.put("ddoc", ddoc);
        o.put("name", name);
        o.put("type", "json");
        o.put("partitioned", partitioned);
        o.set("def", def());
        return o;
    }
}
