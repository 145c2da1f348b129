package dev.chaise.http;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Map;
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

/** What every request pays around its handler: the target parsed, the answer's headers and body rendered. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RequestBench {
    private final Response.Full created = Response.json(201, Map.of("ok", true, "id", "b0001234", "rev", "1-967a00dff5e02add41819138abb3284d"));

    @Benchmark
    public Object parseDocumentPath() {
        return RequestTarget.parse("/couchbench_bulk/b0001234", true);
    }

    @Benchmark
    public Object parseQuery() {
        return RequestTarget.parse("/couchbench_bulk/_all_docs?startkey=%22b0001%22&limit=25&include_docs=true", true);
    }

    @Benchmark
    public HttpHeaders responseHeaders() {
        HttpHeaders h = new DefaultHttpHeaders();
        ConnectionHandler.headers(h, created, "a1b2c3d4e5", true);
        return h;
    }

    @Benchmark
    public Response.Full renderJson() {
        return Response.json(201, Map.of("ok", true, "id", "b0001234", "rev", "1-967a00dff5e02add41819138abb3284d"));
    }
}
