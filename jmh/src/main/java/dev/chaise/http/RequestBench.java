package dev.chaise.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
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

    private final EmbeddedChannel encoder = new EmbeddedChannel(new HttpResponseEncoder());

    /** An answer's head and body as the bytes Chaise writes (Wire), on the request's thread. */
    @Benchmark
    public int answer() {
        ByteBuf b = Wire.full(io.netty.buffer.ByteBufAllocator.DEFAULT, created, created.body(), false, "a1b2c3d4e5", true);
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /**
     * The same answer as Netty's encoder made it before Wire: a response object and its header map
     * filled on the request's thread, encoded to a head buffer plus the body on the event loop.
     */
    @Benchmark
    public int answerByNettyEncoder() {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(created.status()), Unpooled.wrappedBuffer(created.body()));
        var h = r.headers();
        for (Response.Header x : created.headers()) h.add(x.name(), x.value());
        h.set("cache-control", "must-revalidate").set("server", Wire.SERVER).set("date", Wire.httpDate()).set("X-Couch-Request-ID", "a1b2c3d4e5")
                .set("X-CouchDB-Body-Time", "0").set("connection", "keep-alive").set("content-length", created.body().length);
        encoder.writeOutbound(r);
        int n = 0;
        for (ByteBuf b; (b = encoder.readOutbound()) != null; b.release()) n += b.readableBytes();
        return n;
    }

    @Benchmark
    public Response.Full renderJson() {
        return Response.json(201, Map.of("ok", true, "id", "b0001234", "rev", "1-967a00dff5e02add41819138abb3284d"));
    }
}
