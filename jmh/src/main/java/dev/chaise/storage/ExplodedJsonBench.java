package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.storage.json.Json;
import java.io.IOException;
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
 * The exploded-JSON codec (RFC C's document bodies) on a couchbench document: a write parses the
 * body and explodes it; a read implodes the rows and renders the JSON.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ExplodedJsonBench {
    private final byte[] prefix = new byte[24];
    private ObjectNode doc;
    private byte[] json;
    private List<KeyValue> rows;

    @Setup
    public void setup() throws IOException {
        doc = BenchDocs.doc(1234);
        doc.remove("_id");
        json = Json.MAPPER.writeValueAsBytes(doc);
        rows = ExplodedJson.explode(prefix, doc);
    }

    @Benchmark
    public List<KeyValue> explode() {
        return ExplodedJson.explode(prefix, doc);
    }

    /** The size walk a write makes before its transaction (max_document_size, sizes.external, batch cutting). */
    @Benchmark
    public JsonSize measure() {
        return JsonSize.of(doc);
    }

    @Benchmark
    public List<KeyValue> parseAndExplode() throws IOException {
        return ExplodedJson.explode(prefix, (ObjectNode) Json.MAPPER.readTree(json));
    }

    @Benchmark
    public ObjectNode implode() {
        return ExplodedJson.implode(prefix, rows.iterator());
    }

    @Benchmark
    public byte[] implodeAndRender() throws IOException {
        return Json.MAPPER.writeValueAsBytes(ExplodedJson.implode(prefix, rows.iterator()));
    }
}
