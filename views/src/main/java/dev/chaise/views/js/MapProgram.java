package dev.chaise.views.js;

import java.util.List;

/** Compiled map functions of one design document, confined to one thread. */
public interface MapProgram extends AutoCloseable {

    /**
     * Runs every map function over one document.
     *
     * @param docJson the document as JSON text, with {@code _id} and {@code _rev} (crossing into
     *     the engine as one string is what keeps it fast)
     * @return one outcome per map function, in {@link JsEngine.MapSource#maps()} order
     */
    List<MapOutcome> map(String docJson);

    /**
     * {@link #map(String)} of a document as a tree. The default writes it as JSON; a program that
     * reads trees (Mango's, in Java) spares the text and its parse.
     */
    default List<MapOutcome> map(com.fasterxml.jackson.databind.JsonNode doc) {
        return map(dev.chaise.storage.json.Json.write(doc));
    }

    /** {@link #map} over many documents; an engine may cross into JS once for all of them. */
    default List<List<MapOutcome>> mapAll(List<String> docsJson) {
        List<List<MapOutcome>> out = new java.util.ArrayList<>(docsJson.size());
        for (String d : docsJson) out.add(map(d));
        return out;
    }

    /** {@link #mapAll} over documents as trees, written as JSON by default, as {@link #map(com.fasterxml.jackson.databind.JsonNode)}. */
    default List<List<MapOutcome>> mapAllDocs(List<? extends com.fasterxml.jackson.databind.JsonNode> docs) {
        List<String> json = new java.util.ArrayList<>(docs.size());
        for (com.fasterxml.jackson.databind.JsonNode d : docs) json.add(dev.chaise.storage.json.Json.write(d));
        return mapAll(json);
    }

    /** Returns the program to its thread's pool. */
    @Override
    void close();
}
