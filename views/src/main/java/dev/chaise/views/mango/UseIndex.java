package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.DocumentJson;
import java.util.List;

/**
 * {@code use_index}: a design document, or a design document and an index name, given as
 * {@code "ddoc"}, {@code "_design/ddoc"}, {@code "ddoc/name"}, {@code ["ddoc"]} or
 * {@code ["ddoc", "name"]} ({@code mango_opts:validate_use_index}).
 *
 * @param ddoc as given, without {@code _design/}; null when no index is asked for
 * @param name null for any index of the design document
 */
record UseIndex(String ddoc, String name) {
    static final UseIndex NONE = new UseIndex(null, null);

    static UseIndex parse(JsonNode v) {
        if (v == null || v.isNull()) return NONE;
        if (v.isTextual()) {
            String[] parts = v.textValue().split("/", -1);
            return switch (parts.length) {
                case 1 -> new UseIndex(strip(parts[0]), null);
                case 2 -> parts[0].equals("_design") ? new UseIndex(parts[1], null) : new UseIndex(parts[0], parts[1]);
                case 3 -> {
                    if (!parts[0].equals("_design")) throw invalid(v);
                    yield new UseIndex(parts[1], parts[2]);
                }
                default -> throw invalid(v);
            };
        }
        if (v.isArray()) {
            if (v.isEmpty()) return NONE;
            if (v.size() == 1 && v.get(0).isTextual()) return new UseIndex(strip(v.get(0).textValue()), null);
            if (v.size() == 2 && v.get(0).isTextual() && v.get(1).isTextual()) return new UseIndex(strip(v.get(0).textValue()), v.get(1).textValue());
        }
        throw invalid(v);
    }

    private static String strip(String ddoc) {
        return ddoc.startsWith(DocumentJson.DESIGN_PREFIX) ? ddoc.substring(DocumentJson.DESIGN_PREFIX.length()) : ddoc;
    }

    private static MangoException invalid(JsonNode v) {
        return new MangoException("invalid_index_name", "Invalid index name: " + v);
    }

    boolean given() {
        return ddoc != null;
    }

    String ddocId() {
        return DocumentJson.DESIGN_PREFIX + ddoc;
    }

    boolean selects(String indexDdoc, String indexName) {
        return indexDdoc != null && indexDdoc.equals(ddocId()) && (name == null || name.equals(indexName));
    }

    /** As {@code _explain}'s {@code opts.use_index} shows it. */
    List<String> toList() {
        if (ddoc == null) return List.of();
        return name == null ? List.of(ddoc) : List.of(ddoc, name);
    }
}
