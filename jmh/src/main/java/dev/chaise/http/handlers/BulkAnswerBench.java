package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.chaise.http.Response;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The answer of a {@code _bulk_docs} of 1,000 new documents (couchbench's bulk phase), rendered
 * after the commit on the request's thread: {@link #render} as {@link BulkDocsHandler} writes it,
 * straight to bytes; {@link #tree} the same rows built as a tree and serialized, as the handler did
 * before (and as {@code Response.json} does for other answers), for comparison.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BulkAnswerBench {
    private static final int ROWS = 1_000;
    private final List<BulkDocsHandler.Row> rows = new ArrayList<>(ROWS);

    @Setup
    public void setup() {
        for (int i = 0; i < ROWS; i++) {
            rows.add(BulkDocsHandler.Row.ok(String.format("b%07d", i), "1-" + String.format("%032x", i * 0x9E3779B97F4A7C15L)));
        }
    }

    @Benchmark
    public byte[] render() {
        return BulkDocsHandler.render(rows);
    }

    @Benchmark
    public byte[] tree() {
        ArrayNode out = Json.NODES.arrayNode();
        for (BulkDocsHandler.Row r : rows) out.add(DocSupport.okRow(r.id(), r.rev()));
        return Response.json(201, out).body();
    }
}
