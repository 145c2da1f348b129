package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * A design document's {@code shows}, {@code lists} and {@code updates} functions, run as CouchDB's
 * query server runs them (the design document is {@code this}; {@code provides},
 * {@code registerType}, {@code start}, {@code send}, {@code getRow} and {@code require} are in
 * scope). Confined to one thread. A function that throws fails with CouchDB's error: what it threw
 * as {@code ['error', error, reason]} or {@code {error, reason}}, else {@code render_error}.
 */
public interface RenderProgram extends AutoCloseable {

    /**
     * {@code shows[name](doc, req)}.
     *
     * @param docJson {@code "null"} when there is no document
     * @return the response object (a string the function returned is already {@code {"body": ...}})
     */
    JsonNode show(String name, String docJson, String reqJson) throws JsFunctionException;

    /**
     * {@code updates[name](doc, req)}.
     *
     * @return {@code [newDocOrNull, responseObject]}
     */
    JsonNode update(String name, String docJson, String reqJson) throws JsFunctionException;

    /**
     * The design document's {@code rewrites} function (a string member) on {@code req}.
     *
     * @return {@code {path, method, query, headers, body, code}} as the function gave them (a
     *     string it returned is {@code {path, method}}), or null for "no rule"
     */
    JsonNode rewrite(String reqJson) throws JsFunctionException;

    /**
     * {@code lists[name](head, req)}: rows are pulled from {@code io} as the function asks for
     * them, and its output handed to {@code io} in the order it was produced.
     */
    void list(String name, String headJson, String reqJson, ListIO io) throws JsFunctionException;

    /** What a running list function talks to; called on the thread that runs the list. */
    interface ListIO {
        /** The next row as JSON, or null after the last. */
        String nextRow();

        /**
         * Output so far: the chunks {@code send()} produced since the last call, and the response
         * head (code, headers) when {@code start()} gave one since, else null.
         */
        void flush(List<String> chunks, JsonNode head);
    }

    @Override
    void close();
}
