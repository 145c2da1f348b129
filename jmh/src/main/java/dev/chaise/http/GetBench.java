package dev.chaise.http;

import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.config.InMemoryConfigStore;
import dev.chaise.http.wiring.ChaiseHttp;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.BenchDocs;
import dev.chaise.storage.SecurityObject;
import dev.chaise.storage.Storage;
import dev.chaise.views.ViewsModule;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
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
 * A couchbench document GET in process, everything a request's thread does for it but the
 * network and the hand-offs: the request made from its head as {@code ConnectionHandler} makes
 * it, the pipeline (Basic authentication of the server admin, routing, the handler: the door, the
 * read, the rendering, the ETag), the answer as bytes ({@link Wire}), and the request counted and
 * timed in the metrics (the access log off, as in the benchmarks' servers). The server wired as
 * {@code ChaiseHttp} wires it, on the embedded engine on disk, 5,000 documents read in turn.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class GetBench {
    private static final int DOCS = 5_000;
    private static final String DB = "couchbench_bulk";

    private Path dir;
    private KvStore kv;
    private Storage storage;
    private HttpPipeline pipeline;
    private RequestSettings settings;
    private final String[] uris = new String[DOCS];
    private final HttpHeaders headers = new DefaultHttpHeaders();
    private final InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 40000);
    private int next;

    @Setup
    public void open() throws IOException {
        dir = Files.createTempDirectory("chaise-get-bench");
        kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
        storage = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON);
        HttpConfig cfg = HttpConfig.defaults().withPort(0);
        InMemoryConfigStore config = new InMemoryConfigStore(Map.of("admins", Map.of("admin", ServerAdmins.stored("admin", cfg.auth())),
                "chaise", Map.of("access_log", "false")));
        ChaiseHttp http = new ChaiseHttp(cfg, storage, new ViewsModule(storage, null), config, List.of());
        pipeline = new HttpPipeline(http.router(), http.authenticator(), config, http.metrics(), "chaise@127.0.0.1");
        settings = pipeline.settings();
        String[] ids = BenchDocs.load(storage.create(DB), DOCS);
        for (int i = 0; i < DOCS; i++) uris[i] = "/" + DB + "/" + ids[i];
        // As Node's http client sends them (couchbench).
        headers.add("Accept", "application/json");
        headers.add("Authorization", "Basic " + Base64.getEncoder().encodeToString("admin:admin".getBytes()));
        headers.add("Host", "127.0.0.1:5984");
        headers.add("Connection", "keep-alive");
        if (get() < 200) throw new IllegalStateException("no answer");
    }

    @TearDown
    public void close() throws IOException {
        storage.close();
        kv.close();
        BenchDocs.delete(dir);
    }

    /** One GET of the next document, from its head to the bytes of its answer; the answer's length. */
    @Benchmark
    public int get() {
        String uri = uris[next];
        next = (next + 1) % DOCS;
        long start = System.nanoTime();
        String rid = ConnectionHandler.requestId(headers.get("X-Couch-Request-ID"));
        RequestTarget t = RequestTarget.parse(uri, settings.decodePlusToSpace());
        Request req = new Request("GET", uri, t.rawPath(), t.path(), t.query(), headers, RequestBody.of(new byte[0]), "/127.0.0.1:40000", rid,
                null, Map.of(), "127.0.0.1:5984", settings);
        HttpPipeline.Outcome outcome = pipeline.handle(req);
        Response resp = outcome.response();
        if (resp.status() != 200) throw new IllegalStateException("status " + resp.status());
        ByteBuf answer = Wire.full(io.netty.buffer.ByteBufAllocator.DEFAULT, resp, ((Response.Full) resp).body(), false, rid, true);
        int n = answer.readableBytes();
        answer.release();
        pipeline.completed(peer, headers.get("Host"), "GET", uri, resp.status(), true, System.nanoTime() - start,
                HttpPipeline.userOf(outcome.request()).name(), rid);
        return n;
    }

    /**
     * The same on a new virtual thread, as the server runs each request (time it with
     * {@code CpuTime --process}): what a thread's first use costs (thread-local caches) shows here.
     */
    @Benchmark
    public int getOnVirtualThread() throws InterruptedException {
        int[] n = new int[1];
        Thread.ofVirtual().start(() -> n[0] = get()).join();
        return n[0];
    }
}
