package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** Compiled JavaScript reduce functions of one design document, confined to one thread. */
public interface ReduceProgram extends AutoCloseable {

    /**
     * {@code reduce(keys, values, false)}.
     *
     * @param index which function, in {@link JsEngine.ReduceSource#reduces()} order
     * @param keys each {@code [key, docid]}
     */
    JsonNode reduce(int index, List<JsonNode> keys, List<JsonNode> values) throws JsFunctionException;

    /** {@code reduce(null, values, true)}. */
    JsonNode rereduce(int index, List<JsonNode> values) throws JsFunctionException;

    @Override
    void close();
}
