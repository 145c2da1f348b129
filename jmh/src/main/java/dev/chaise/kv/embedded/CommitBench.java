package dev.chaise.kv.embedded;

import dev.chaise.kv.KvStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The embedded engine's commit path on disk: a small transaction (one 300-byte value) through
 * resolution, the WAL fsync and the snapshot's publication. One committer leads and syncs its own
 * commit; four share fsyncs (group commit: one leads, the others wait for it), as four PUT clients do.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class CommitBench {
    private Path dir;
    private KvStore kv;
    private final AtomicLong next = new AtomicLong();
    private final byte[] value = new byte[300];

    @Setup(Level.Trial)
    public void open() throws IOException {
        dir = Files.createTempDirectory("chaise-commit-bench");
        kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        kv.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    private Object commitOne() {
        byte[] key = ByteBuffer.allocate(9).put((byte) 0x15).putLong(next.incrementAndGet()).array();
        return kv.run(tx -> {
            tx.set(key, value);
            return key;
        });
    }

    @Benchmark
    @Threads(1)
    public Object oneCommitter() {
        return commitOne();
    }

    @Benchmark
    @Threads(4)
    public Object fourCommitters() {
        return commitOne();
    }
}
