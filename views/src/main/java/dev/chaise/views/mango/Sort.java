package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A Mango sort (and an index's {@code fields}): names, each ascending or descending, all in one direction ({@code mango_sort}). */
final class Sort {
    record Field(String name, boolean descending) {}

    private Sort() {}

    static List<Field> parse(JsonNode spec) {
        if (!spec.isArray()) throw new MangoException("invalid_sort_json", "Sort must be an array of sort specs, not: " + spec);
        List<Field> out = new ArrayList<>();
        for (JsonNode s : spec) {
            if (s.isTextual() && !s.textValue().isEmpty()) {
                out.add(new Field(s.textValue(), false));
            } else if (s.isObject() && s.size() == 1) {
                Map.Entry<String, JsonNode> e = s.properties().iterator().next();
                String dir = e.getValue().isTextual() ? e.getValue().textValue() : "";
                if (!dir.equals("asc") && !dir.equals("desc")) throw invalidField(s);
                out.add(new Field(e.getKey(), dir.equals("desc")));
            } else {
                throw invalidField(s);
            }
        }
        if (out.stream().map(Field::descending).distinct().count() > 1) {
            throw new MangoException("unsupported_mixed_sort", "Sorts currently only support a single direction for all fields.");
        }
        return List.copyOf(out);
    }

    private static MangoException invalidField(JsonNode s) {
        return new MangoException("invalid_sort_field", "Invalid sort field: " + s);
    }

    static List<String> names(List<Field> sort) {
        return sort.stream().map(Field::name).toList();
    }

    static boolean descending(List<Field> sort) {
        return !sort.isEmpty() && sort.getFirst().descending();
    }

    /** As {@code _explain}'s {@code opts.sort} shows it: one object, name to direction. */
    static ObjectNode toJson(List<Field> sort) {
        ObjectNode o = Json.NODES.objectNode();
        for (Field f : sort) o.put(f.name(), f.descending() ? "desc" : "asc");
        return o;
    }

    static ArrayNode toList(List<Field> sort) {
        ArrayNode a = Json.NODES.arrayNode();
        for (Field f : sort) a.addObject().put(f.name(), f.descending() ? "desc" : "asc");
        return a;
    }
}
