package dev.chaise.http;

import io.netty.buffer.Unpooled;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A 310 KB body (couchbench's {@code _bulk_docs}) read whole after it arrived in the HTTP
 * decoder's 64 KB pieces: {@link #declared} with its Content-Length, as a client sends it, into one
 * array of that size; {@link #unknown} without (chunked), grown as it is read.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RequestBodyBench {
    private static final int SIZE = 310_000;
    private static final int PIECE = 64 << 10;
    private final byte[] data = new byte[SIZE];

    private byte[] read(long declared) {
        RequestBody b = new RequestBody(Long.MAX_VALUE, Long.MAX_VALUE, TimeUnit.SECONDS.toNanos(5), () -> {}, () -> {}, null, declared);
        for (int off = 0; off < SIZE; off += PIECE) b.offer(Unpooled.wrappedBuffer(data, off, Math.min(PIECE, SIZE - off)));
        b.end();
        return b.bytes();
    }

    @Benchmark
    public byte[] declared() {
        return read(SIZE);
    }

    @Benchmark
    public byte[] unknown() {
        return read(-1);
    }
}
