package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.ReduceProgram;
import java.util.ArrayList;
import java.util.List;

/**
 * A JavaScript reduce, fed in chunks: every {@link #CHUNK} rows become one {@code reduce} call, and
 * the partial results one {@code rereduce}, which is what CouchDB's B+tree does with its nodes.
 */
final class JsReducer implements Reducer {
    static final int CHUNK = 200;

    private final ReduceProgram program;
    private final int index;

    JsReducer(ReduceProgram program, int index) {
        this.program = program;
        this.index = index;
    }

    @Override
    public Accumulator start() {
        return new Accumulator() {
            final List<JsonNode> keys = new ArrayList<>();
            final List<JsonNode> values = new ArrayList<>();
            final List<JsonNode> reduced = new ArrayList<>();

            @Override
            public void add(JsonNode key, String docId, JsonNode value) {
                keys.add(Json.NODES.arrayNode().add(key).add(docId));
                values.add(value);
                if (values.size() >= CHUNK) flush();
            }

            @Override
            public void addReduced(JsonNode r) {
                reduced.add(r);
            }

            private void flush() {
                if (values.isEmpty()) return;
                try {
                    reduced.add(program.reduce(index, List.copyOf(keys), List.copyOf(values)));
                } catch (JsFunctionException e) {
                    throw new ViewException(ViewException.Kind.REDUCE_ERROR, e.error(), e.reason());
                }
                keys.clear();
                values.clear();
            }

            @Override
            public JsonNode result() {
                if (reduced.isEmpty()) {
                    try {
                        return program.reduce(index, List.copyOf(keys), List.copyOf(values));
                    } catch (JsFunctionException e) {
                        throw new ViewException(ViewException.Kind.REDUCE_ERROR, e.error(), e.reason());
                    }
                }
                flush();
                if (reduced.size() == 1) return reduced.getFirst();
                try {
                    return program.rereduce(index, List.copyOf(reduced));
                } catch (JsFunctionException e) {
                    throw new ViewException(ViewException.Kind.REDUCE_ERROR, e.error(), e.reason());
                }
            }
        };
    }
}
