package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Mango {@code "type": "nouveau"} index: an entry of a {@code "language": "query"} design
 * document's {@code nouveau} member, {@code {"index": <definition>, "analyzer": ...}}, as CouchDB
 * 3.5's {@code mango_idx_nouveau} writes it. The definition keeps {@code mango_opts}' members in
 * their order: {@code default_analyzer}, {@code default_field}, {@code partial_filter_selector},
 * {@code selector}, {@code fields} (a list of {@code {"name", "type"}}, or {@code "all_fields"}),
 * {@code index_array_lengths}. Nouveau builds it with {@link NouveauFields} instead of a function.
 *
 * @param columns {@code $default} (unless disabled) and each field as {@code name:type}; null for all fields
 * @param partial the partial filter selector, or null
 */
public record NouveauIndex(String ddoc, String name, ObjectNode def, boolean partitioned, List<String> columns, Selector partial) {
    static final Set<String> TYPES = Set.of("text", "string", "number", "boolean");

    /** The design document's Nouveau indexes Mango can use, in member order; entries it cannot read are left out, as CouchDB logs and skips them. */
    static List<NouveauIndex> fromDesignDoc(String ddocId, JsonNode body, boolean dbPartitioned) {
        List<NouveauIndex> out = new ArrayList<>();
        if (!DesignDoc.QUERY.equals(body.path("language").asText(null))) return out;
        JsonNode all = body.get("nouveau");
        if (all == null || !all.isObject()) return out;
        JsonNode option = body.path("options").path("partitioned");
        boolean partitioned = DesignDoc.partitioned(option.isBoolean() ? option.booleanValue() : null, dbPartitioned);
        for (Map.Entry<String, JsonNode> e : all.properties()) {
            try {
                ObjectNode def = validate(e.getValue().get("index"));
                out.add(of(ddocId, e.getKey(), def, partitioned));
            } catch (MangoException ex) {
                // not an index Mango can read
            }
        }
        return out;
    }

    private static NouveauIndex of(String ddocId, String name, ObjectNode def, boolean partitioned) {
        List<String> cols = null;
        JsonNode fields = def.get("fields");
        if (fields.isArray()) {
            cols = new ArrayList<>();
            if (defaultEnabled(def)) cols.add("$default");
            for (JsonNode f : fields) cols.add(f.get("name").textValue() + ":" + f.get("type").textValue());
        }
        JsonNode pfs = def.path("partial_filter_selector");
        if (pfs.isEmpty()) pfs = def.path("selector"); // text indexes' older name for it
        return new NouveauIndex(ddocId, name, def, partitioned, cols, pfs.isEmpty() ? null : Selector.parse(pfs));
    }

    /** mango_idx_nouveau:get_default_field_options: on unless {@code false} or {@code {"enabled": false}}. */
    static boolean defaultEnabled(JsonNode def) {
        JsonNode d = def.path("default_field");
        if (d.isBoolean()) return d.booleanValue();
        JsonNode en = d.path("enabled");
        return !(en.isBoolean() && !en.booleanValue());
    }

    /**
     * An index definition checked and completed as {@code mango_opts} does for {@code POST _index}:
     * every member present, in its order, selectors normalized, {@code []} fields as {@code "all_fields"}.
     */
    static ObjectNode validate(JsonNode def) {
        if (def == null || !def.isObject()) throw new MangoException("invalid_index", "Nouveau indexes must be an object, not: " + def);
        Map<String, JsonNode> rest = new LinkedHashMap<>();
        def.properties().forEach(e -> rest.put(e.getKey(), e.getValue()));
        ObjectNode out = Json.NODES.objectNode();
        JsonNode da = rest.remove("default_analyzer");
        out.set("default_analyzer", da == null ? Json.NODES.textNode("keyword") : da);
        JsonNode df = rest.remove("default_field");
        out.set("default_field", df == null ? Json.NODES.objectNode() : df);
        out.set("partial_filter_selector", selector(rest.remove("partial_filter_selector")));
        out.set("selector", selector(rest.remove("selector")));
        out.set("fields", fields(rest.remove("fields")));
        JsonNode ial = rest.remove("index_array_lengths");
        if (ial != null && !ial.isBoolean()) throw new MangoException("invalid_boolean", "Invalid boolean value: " + ial);
        out.put("index_array_lengths", ial == null || ial.booleanValue());
        if (!rest.isEmpty()) throw new MangoException("invalid_key", "Invalid key " + rest.keySet().iterator().next() + " for this request.");
        return out;
    }

    private static JsonNode selector(JsonNode s) {
        if (s == null) return Json.NODES.objectNode();
        if (!s.isObject()) throw new MangoException("invalid_selector_json", "Selector must be a JSON object, not: " + s);
        return Selector.parse(s).toJson();
    }

    private static JsonNode fields(JsonNode f) {
        if (f == null || (f.isArray() && f.isEmpty()) || (f.isTextual() && f.textValue().equals("all_fields"))) return Json.NODES.textNode("all_fields");
        if (!f.isArray()) throw badFields(f);
        for (JsonNode one : f) {
            if (!one.isObject() || one.size() != 2 || !one.path("name").isTextual() || one.path("name").textValue().isEmpty()
                    || !TYPES.contains(one.path("type").asText(""))) {
                throw badFields(f);
            }
        }
        return f;
    }

    private static MangoException badFields(JsonNode def) {
        return new MangoException("invalid_index_fields_definition", """
                Text Index field definitions must be of the form
                            {"name": "non-empty fieldname", "type":
                                "boolean,number,string or text"}. Def: """ + def);
    }

    /** The design document's {@code nouveau} entry: the definition, and the analyzer CouchDB records beside it (Nouveau reads neither analyzer). */
    static ObjectNode entry(ObjectNode def) {
        ObjectNode e = Json.NODES.objectNode();
        e.set("index", def);
        if (!defaultEnabled(def)) {
            e.put("analyzer", "keyword");
        } else {
            ObjectNode a = e.putObject("analyzer");
            a.put("name", "perfield");
            a.set("default", def.get("default_analyzer"));
            JsonNode df = def.path("default_field").path("analyzer");
            a.putObject("fields").put("$default", df.isTextual() ? df.textValue() : "standard");
        }
        return e;
    }

    /** {@code GET _index}'s entry: fields as {@code {name: type}}, all fields as {@code []}, an empty partial filter left out. */
    ObjectNode toJson() {
        ObjectNode o = Json.NODES.objectNode();
        o.put("ddoc", ddoc);
        o.put("name", name);
        o.put("type", "nouveau");
        o.put("partitioned", partitioned);
        ObjectNode d = o.putObject("def");
        for (Map.Entry<String, JsonNode> e : def.properties()) {
            switch (e.getKey()) {
                case "fields" -> {
                    ArrayNode fs = d.putArray("fields");
                    if (e.getValue().isArray()) for (JsonNode f : e.getValue()) fs.addObject().set(f.get("name").textValue(), f.get("type"));
                }
                case "partial_filter_selector" -> {
                    if (!e.getValue().isEmpty()) d.set(e.getKey(), e.getValue());
                }
                default -> d.set(e.getKey(), e.getValue());
            }
        }
        return o;
    }

    /** mango_idx_nouveau:is_usable: never for the empty selector; else every field the query needs is indexed. */
    boolean usable(Selector s) {
        if (s.isEmpty()) return false;
        return columns == null || columns.containsAll(TextQuery.indexableFields(s));
    }
}
