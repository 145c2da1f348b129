package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The map step of a {@code "language": "query"} design document, in Java (CouchDB runs it in
 * Erlang, {@code mango_native_proc}): for each JSON index, a document that matches the partial
 * filter and has every column emits one row, key the array of the column values in index order,
 * value null. Design documents emit nothing. A view Mango cannot read emits nothing either (and
 * is not listed), as CouchDB ignores it. Stateless, so any thread may use it.
 */
public final class MangoMapProgram implements MapProgram {
    private final List<JsonIndex> indexes; // per view of the design document, in view order; null entries emit nothing
    private final List<List<List<String>>> paths;

    public MangoMapProgram(DesignDoc ddoc) {
        indexes = new ArrayList<>();
        paths = new ArrayList<>();
        for (DesignDoc.View v : ddoc.views()) {
            JsonIndex i;
            try {
                i = JsonIndex.fromView(ddoc.id(), v.name(), Json.MAPPER.readTree(v.map()), false); // the rows do not depend on it
            } catch (IOException e) {
                i = null;
            }
            indexes.add(i);
            List<List<String>> p = new ArrayList<>();
            if (i != null) for (String c : i.columns()) p.add(Selector.parseField(c));
            paths.add(p);
        }
    }

    @Override
    public List<MapOutcome> map(String docJson) {
        JsonNode doc;
        try {
            doc = Json.MAPPER.readTree(docJson);
        } catch (IOException e) {
            throw new IllegalStateException("a document to index is not JSON", e);
        }
        return map(doc);
    }

    @Override
    public List<List<MapOutcome>> mapAllDocs(List<? extends JsonNode> docs) {
        List<List<MapOutcome>> out = new ArrayList<>(docs.size());
        for (JsonNode d : docs) out.add(map(d));
        return out;
    }

    /** The rows of one document, per index. */
    @Override
    public List<MapOutcome> map(JsonNode doc) {
        List<MapOutcome> out = new ArrayList<>(indexes.size());
        boolean design = doc.path("_id").asText("").startsWith(DocumentJson.DESIGN_PREFIX);
        for (int v = 0; v < indexes.size(); v++) {
            ArrayNode key = design ? null : key(v, doc);
            out.add(new MapOutcome.Rows(key == null ? List.of() : List.of(new MapOutcome.Emit(key, NullNode.getInstance()))));
        }
        return out;
    }

    private ArrayNode key(int v, JsonNode doc) {
        JsonIndex i = indexes.get(v);
        if (i == null || (i.partial() != null && !i.partial().matches(doc))) return null;
        ArrayNode key = Json.NODES.arrayNode();
        for (List<String> path : paths.get(v)) {
            JsonNode value = Selector.get(doc, path);
            if (value == null) return null; // missing or a bad path: not indexed
            key.add(value);
        }
        return key;
    }

    @Override
    public void close() {}
}
