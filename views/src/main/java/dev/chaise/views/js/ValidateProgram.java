package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;

/** A design document's {@code validate_doc_update} function, confined to one thread. */
public interface ValidateProgram extends AutoCloseable {

    /**
     * Runs the function with the design document as {@code this}.
     *
     * @param oldDocJson {@code "null"} when the write replaces nothing
     * @return null if it returned, else the value it threw (CouchDB's verdict, such as
     *     {@code {"forbidden": "..."}})
     * @throws JsFunctionException if it threw an {@code Error} (or ran over its time or memory)
     */
    JsonNode validate(String newDocJson, String oldDocJson, String userCtxJson, String secObjJson) throws JsFunctionException;

    @Override
    void close();
}
