package dev.chaise.storage;

import java.io.IOException;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A view build's read of one batch: the documents of 500 changes (couchbench documents, on the
 * durable embedded engine), one by one ({@link DbReader#get}: an iterator, a seek and the revision
 * record each) against in runs of 128 ({@link DbReader#changed}, as {@code ViewIndexer} reads them).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChangedDocsBench {
    private static final int DOCS = 20_000;
    private static final int BATCH = 500;
    private static final int RUN = 128;
    private BenchStore store;
    private Database db;
    private List<Change> changes;

    @Setup
    public void setup() throws IOException {
        store = BenchStore.open("changed-docs-bench");
        db = store.storage().create("bench");
        BenchDocs.load(db, DOCS);
        changes = new ArrayList<>();
        // A batch from the middle of the feed.
        db.changes(null, ScanProperties.FORWARD, (r, c) -> c).forEachRemaining(c -> {
            if (changes.size() < BATCH && c.id().compareTo(String.format("b%07d", DOCS / 2)) >= 0) changes.add(c);
        });
    }

    @TearDown
    public void close() throws IOException {
        store.close();
    }

    @Benchmark
    public int oneByOne() {
        return db.read(r -> {
            int n = 0;
            for (Change c : changes) n += r.get(c.id(), c.rev(), false).body().size();
            return n;
        });
    }

    @Benchmark
    public int inRuns() {
        return db.read(r -> {
            int n = 0;
            for (int i = 0; i < changes.size(); i += RUN) {
                for (StoredDoc d : r.changed(changes.subList(i, Math.min(changes.size(), i + RUN)))) n += d.body().size();
            }
            return n;
        });
    }
}
