package dev.chaise.views.query;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.ReduceProgram;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A JavaScript reduce: {@code reduce(keys, values, false)} over a batch of rows (a tree entry's,
 * or a chunk of a group's), {@code reduce(null, values, true)} over partials, in the engine's
 * context pool through one {@link ReduceProgram}. A function that throws {@code fatal_error}
 * leaves a failure in the partial, which a query of that group reports; one the engine stops
 * (time or memory) fails the write or query that called it, as for map functions.
 */
final class JsReducer implements Reducer<Object> {
    private final ReduceProgram program;
    private final int index;

    /** A failed call, kept as a partial. */
    record Failure(String error, String reason) {}

    JsReducer(ReduceProgram program, int index) {
        this.program = program;
        this.index = index;
    }

    @Override
    public Object reduce(List<Row> rows) {
        List<JsonNode> keys = new ArrayList<>(rows.size());
        List<JsonNode> values = new ArrayList<>(rows.size());
        for (Row r : rows) {
            keys.add(Json.NODES.arrayNode().add(r.key()).add(r.docId()));
            values.add(r.value());
        }
        try {
            return program.reduce(index, keys, values);
        } catch (JsFunctionException e) {
            return failed(e);
        }
    }

    @Override
    public Object rereduce(List<Object> parts) {
        for (Object p : parts) if (p instanceof Failure) return p;
        if (parts.size() == 1) return parts.getFirst();
        List<JsonNode> values = new ArrayList<>(parts.size());
        for (Object p : parts) values.add((JsonNode) p);
        try {
            return program.rereduce(index, values);
        } catch (JsFunctionException e) {
            return failed(e);
        }
    }

    private static Failure failed(JsFunctionException e) {
        if (JsEngine.stoppedByEngine(e.error())) {
            throw new ViewException(ViewException.Kind.OS_PROCESS_ERROR, "reduce function: " + e.reason());
        }
        return new Failure(e.error(), e.reason());
    }

    @Override
    public boolean failed(Object p) {
        return p instanceof Failure;
    }

    @Override
    public byte[] encode(Object p) {
        if (p instanceof Failure f) return Tuple.from("f", f.error, f.reason).pack();
        byte[] json = BuiltinReducers.jsonBytes((JsonNode) p);
        byte[] out = new byte[json.length + 1];
        out[0] = 'j';
        System.arraycopy(json, 0, out, 1, json.length);
        return out;
    }

    @Override
    public Object decode(byte[] bytes) {
        if (bytes[0] == 'j') return BuiltinReducers.parse(Arrays.copyOfRange(bytes, 1, bytes.length));
        Tuple t = Tuple.fromBytes(bytes);
        return new Failure(t.getString(1), t.getString(2));
    }

    @Override
    public String overflow(Object p) {
        return p instanceof Failure f && f.error.equals("reduce_overflow_error") ? f.reason : null;
    }

    @Override
    public JsonNode finish(Object p) {
        if (p instanceof Failure f) throw new ViewException(ViewException.Kind.REDUCE_ERROR, f.error, f.reason);
        return (JsonNode) p;
    }
}
