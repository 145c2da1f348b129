package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.json.Json;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a Mango {@code nouveau} index makes of a document, in Java (CouchDB's
 * {@code mango_native_proc} answers {@code nouveau_index_doc} in Erlang): every leaf value is a
 * field named by its path and type, each segment escaped ({@code address.city:string} is
 * {@code address.city_3astring}, array elements {@code tags.[]:string}); strings are
 * {@code string} fields, numbers {@code double}, booleans the strings {@code true}/{@code false};
 * each array's length is {@code path.[]:length}; every string is also text of the
 * {@code $default} field, which {@code $text} searches; every field's name is a value of the
 * {@code $fieldnames} field, which {@code $exists} searches. With a field list only those fields
 * (and array lengths) are kept. Design documents and documents the partial filter refuses give no
 * field, so Nouveau leaves them out.
 *
 * <p>Its outcome is what an index function's {@code index()} calls give the search package:
 * one emit per field, key {@code {"n": name, "t": type, "v": value, "s": false}}.
 */
public final class NouveauFields implements MapProgram {
    private final Set<String> fields; // escaped names, or null for all
    private final boolean lengths;
    private final boolean defaultField;
    private final Selector partial;

    /** @param defJson the index's definition, as the design document keeps it */
    public NouveauFields(String defJson) {
        ObjectNode def;
        try {
            def = NouveauIndex.validate(Json.MAPPER.readTree(defJson));
        } catch (IOException e) {
            throw new IllegalArgumentException("a Mango nouveau definition is not JSON", e);
        }
        JsonNode list = def.get("fields");
        if (list.isArray()) {
            fields = new HashSet<>();
            for (JsonNode f : list) fields.add(TextQuery.escapeUser(f.get("name").textValue() + ":" + f.get("type").textValue()));
        } else {
            fields = null;
        }
        lengths = def.get("index_array_lengths").booleanValue();
        defaultField = NouveauIndex.defaultEnabled(def);
        JsonNode pfs = def.get("partial_filter_selector");
        if (pfs.isEmpty()) pfs = def.get("selector");
        partial = pfs.isEmpty() ? null : Selector.parse(pfs);
    }

    private record Value(String name, String type, JsonNode value) {}

    @Override
    public List<MapOutcome> map(String docJson) {
        try {
            return map(Json.MAPPER.readTree(docJson));
        } catch (IOException e) {
            throw new IllegalStateException("a document to index is not JSON", e);
        }
    }

    @Override
    public List<MapOutcome> map(JsonNode doc) {
        return List.of(new MapOutcome.Rows(emits(doc)));
    }

    private List<MapOutcome.Emit> emits(JsonNode doc) {
        if (doc.path("_id").asText("").startsWith(DocumentJson.DESIGN_PREFIX)) return List.of();
        if (partial != null && !partial.matches(doc)) return List.of();
        List<Value> values = new ArrayList<>();
        walk(doc, new ArrayList<>(), values);
        List<Value> all = new ArrayList<>();
        if (defaultField) for (Value v : values) if (v.type().equals("string")) all.add(new Value("$default", "text", v.value()));
        all.addAll(values);
        Set<String> names = new LinkedHashSet<>();
        for (Value v : all) names.add(v.name());
        List<MapOutcome.Emit> out = new ArrayList<>(names.size() + all.size());
        for (String n : names) out.add(emit("$fieldnames", "string", Json.NODES.textNode(n)));
        for (Value v : all) {
            out.add(switch (v.type()) {
                case "number", "length" -> emit(v.name(), "double", v.value());
                case "boolean" -> emit(v.name(), "string", Json.NODES.textNode(v.value().booleanValue() ? "true" : "false"));
                case "null" -> emit(v.name(), "string", Json.NODES.textNode("true"));
                default -> emit(v.name(), v.type(), v.value()); // string, text
            });
        }
        return out;
    }

    private void walk(JsonNode v, List<String> path, List<Value> out) {
        if (v.isObject()) {
            for (Map.Entry<String, JsonNode> e : v.properties()) {
                path.add(e.getKey());
                walk(e.getValue(), path, out);
                path.removeLast();
            }
        } else if (v.isArray()) {
            path.add("[]");
            if (lengths) out.add(new Value(name(path, "length"), "length", Json.NODES.numberNode(v.size()))); // not filtered, as CouchDB's
            for (JsonNode e : v) walk(e, path, out);
            path.removeLast();
        } else if (!path.isEmpty()) {
            String type = v.isTextual() ? "string" : v.isNumber() ? "number" : v.isBoolean() ? "boolean" : "null";
            String n = name(path, type);
            if (fields == null || fields.contains(n)) out.add(new Value(n, type, v));
        }
    }

    /** mango_native_proc:make_text_field_name: the last segment takes {@code :type}, and every segment is escaped. */
    private static String name(List<String> path, String type) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < path.size(); i++) {
            if (i > 0) b.append('.');
            b.append(TextQuery.escapeSegment(i == path.size() - 1 ? path.get(i) + ":" + type : path.get(i)));
        }
        return b.toString();
    }

    private static MapOutcome.Emit emit(String name, String type, JsonNode value) {
        ObjectNode k = Json.NODES.objectNode();
        k.put("n", name).put("t", type).set("v", value);
        k.put("s", false);
        return new MapOutcome.Emit(k, Json.NODES.nullNode());
    }

    @Override
    public void close() {}
}
