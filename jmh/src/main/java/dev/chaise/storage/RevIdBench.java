package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
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

/** CouchDB's revision id of a couchbench document ({@link RevHasher}): the Erlang term streamed into MD5. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RevIdBench {
    private ObjectNode doc;
    private RevId parent;

    @Setup
    public void setup() {
        doc = BenchDocs.doc(1234);
        doc.remove("_id");
        parent = RevHasher.newRevId(null, false, doc, List.of());
    }

    @Benchmark
    public RevId newDocument() {
        return RevHasher.newRevId(null, false, doc, List.of());
    }

    @Benchmark
    public RevId edit() {
        return RevHasher.newRevId(parent, false, doc, List.of());
    }

    @Benchmark
    public String render() {
        return parent.toString();
    }
}
