package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;

/** A design document's filter functions, confined to one thread. */
public interface FilterProgram extends AutoCloseable {

    /** True if the design document has {@code filters[name]}. */
    boolean has(String name);

    /** Compiles {@code filters[name]} now, so a broken one fails before any document is read. */
    void compile(String name) throws JsFunctionException;

    /**
     * {@code filters[name](doc, req)} (compiled first if need be).
     *
     * @param req CouchDB's request object (at least {@code query}, {@code method}, {@code userCtx})
     * @throws JsFunctionException if the function throws (or runs over its time or memory): CouchDB
     *     fails the request then
     */
    boolean filter(String name, String docJson, JsonNode req) throws JsFunctionException;

    @Override
    void close();
}
