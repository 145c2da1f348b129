package dev.chaise.views.search;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.ErlangTerm;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One index of a design document's {@code nouveau} member:
 * {@code {"index": "function (doc) {...}", "default_analyzer": "standard", "field_analyzers": {...}}}.
 *
 * @param sig Nouveau's signature: the hex sha256 of {@code term_to_binary({DefaultAnalyzer,
 *     FieldAnalyzers, Def})} ({@code nouveau_util:design_doc_to_index}), so a changed function or
 *     analyzer is a new index and an unchanged one in another design document is the same index
 * @param query whether it is a Mango {@code "type": "nouveau"} index ({@code "language": "query"}):
 *     {@code def} is then its JSON definition, indexed by the program {@link SearchIndexes#useQueryIndexer} gives,
 *     with the analyzers Mango records beside it ({@code "analyzer": {"name": "perfield", "default":
 *     "keyword", "fields": {"$default": "standard"}}}), so a string value is matched as the keyword it
 *     is indexed as (Nouveau 3.5 reads neither and analyzes it with {@code standard}: {@code "Bob"}
 *     finds nothing there); the signature is still Nouveau's
 */
public record SearchIndexDef(String ddocId, String name, String def, String defaultAnalyzer,
                             Map<String, String> fieldAnalyzers, String sig, boolean query) {

    /** The index {@code name} of a design document's body; Nouveau's 404 and 400 when it is missing or has no function. */
    public static SearchIndexDef parse(String ddocId, JsonNode body, String name) {
        JsonNode all = body.path("nouveau");
        JsonNode idx = all.isObject() ? all.get(name) : null;
        if (idx == null) throw SearchException.notFound(name + " not found.");
        JsonNode def = idx.get("index");
        if (!idx.isObject() || def == null) throw new SearchException(400, "invalid_design_doc", "index `" + name + "` must have parameter `index`");
        boolean query = def.isObject() && "query".equals(body.path("language").asText(null));
        if (!def.isTextual() && !query) throw new SearchException(400, "invalid_design_doc", "index `" + name + "` must have a function as its parameter `index`");
        JsonNode da = idx.get("default_analyzer");
        String defaultAnalyzer = da == null ? "standard" : da.asText();
        JsonNode fa = idx.get("field_analyzers");
        Map<String, String> fields = new LinkedHashMap<>();
        if (fa != null && fa.isObject()) for (var e : fa.properties()) fields.put(e.getKey(), e.getValue().asText());
        JsonNode recorded = idx.get("analyzer");
        if (query && recorded != null) { // Mango's, below
            defaultAnalyzer = recorded.isTextual() ? recorded.textValue() : recorded.path("default").asText("keyword");
            fields.clear();
            for (var e : recorded.path("fields").properties()) fields.put(e.getKey(), e.getValue().asText());
        }
        Object term = ErlangTerm.Tuple.of(
                da == null ? "standard" : ErlangTerm.ejson(da),
                fa == null ? Map.of() : ErlangTerm.ejson(fa),
                ErlangTerm.ejson(def));
        return new SearchIndexDef(ddocId, name, query ? def.toString() : def.textValue(), defaultAnalyzer, fields, sha256(ErlangTerm.encode(term)), query);
    }

    /** The names of a design document's indexes, in its order. */
    public static List<String> names(JsonNode body) {
        JsonNode all = body.path("nouveau");
        if (!all.isObject()) return List.of();
        List<String> names = new java.util.ArrayList<>();
        all.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
