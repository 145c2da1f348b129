package dev.chaise.http.handlers;

import dev.chaise.http.Request;
import dev.chaise.http.RequestBody;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.storage.BenchDocs;
import dev.chaise.storage.BenchStore;
import dev.chaise.storage.UserCtx;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.io.IOException;
import java.util.List;
import java.util.Map;
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
 * The {@code _changes} feed's inner loop on the request's thread: the changes subspace scanned
 * across transactions, each row decoded and rendered, the body framed for the feed, for couchbench's
 * {@code GET /{db}/_changes?since=0} over 20,000 of its documents (durable embedded engine, an admin
 * on a plain database). Only the socket is left out: the bytes go to a stream that counts them.
 * Per row: divide by {@link #DOCS}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChangesFeedBench {
    public static final int DOCS = 20_000;
    private BenchStore store;
    private Router.Handler changes;

    @Setup
    public void setup() throws IOException {
        store = BenchStore.open("changes-feed-bench");
        BenchDocs.load(store.storage().create("bench"), DOCS);
        Router r = new Router();
        new ChangesHandler(null, new Access(store.storage())).register(r);
        changes = r.match("GET", List.of("bench", "_changes")).handler();
    }

    @TearDown
    public void close() throws IOException {
        store.close();
    }

    private long feed(Map<String, List<String>> query) throws Exception {
        Request req = new Request("GET", "/bench/_changes", "/bench/_changes", List.of("bench", "_changes"), query, new DefaultHttpHeaders(),
                RequestBody.of(new byte[0]), "127.0.0.1:1", "bench", new UserCtx("admin", List.of(UserCtx.ADMIN_ROLE), "default"),
                Map.of("db", "bench"), "127.0.0.1:5984", null);
        Counting out = new Counting();
        ((Response.Streamed) changes.handle(req)).body().writeTo(out);
        return out.bytes;
    }

    /** couchbench's request: the whole feed, {@code normal}. */
    @Benchmark
    public long normal() throws Exception {
        return feed(Map.of("since", List.of("0")));
    }

    /** The same rows a line each, flushed after every row, as a replicator's live feed reads a backlog. */
    @Benchmark
    public long continuous() throws Exception {
        return feed(Map.of("since", List.of("0"), "feed", List.of("continuous"), "timeout", List.of("0")));
    }

    /** A stream that keeps nothing: the bytes and chunks a server would send. */
    private static final class Counting implements ResponseStream {
        long bytes;
        long flushes;

        @Override
        public void write(byte[] b) {
            bytes += b.length;
        }

        @Override
        public void flush() {
            flushes++;
        }

        @Override
        public boolean isOpen() {
            return true;
        }
    }
}
