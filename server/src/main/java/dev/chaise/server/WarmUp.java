package dev.chaise.server;

import dev.chaise.http.wiring.ChaiseHttp;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.storage.SecurityObject;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Storage;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.js.GraalJsEngine;
import dev.chaise.views.jobs.JobQueue;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Warms the request path at start. HotSpot compiles methods, not servers: a throwaway server over
 * an in-memory store, on a loopback port of its own, is sent what clients send most (a bulk load,
 * a Mango index build, a JavaScript view build with built-in reduces, sorted and projected
 * {@code _find}, document reads) over one kept-alive connection, then closed. Without it a
 * restarted server answers its first few thousand small requests with code HotSpot has not
 * finished compiling, about twice as slowly, and its first view build pays C2 for the build path
 * (docs/benchmarks.md). Nothing of it shows: its own store, port, admin, metrics and JavaScript
 * engine, no access log. As it runs at every start, it is also what the AOT cache's training run
 * (the first {@code ./chaise start}) records profiles of, whatever else that run does.
 */
final class WarmUp {
    /** Documents a bulk request carries. */
    private static final int BATCH = 500;
    /**
     * The first documents go in bulk requests of {@link #SMALL_BATCH}, this many of them. C2
     * compiles a method only after some 600 calls (tier 4's minimum, whatever its loops do), so
     * what runs once per write request (the handler, the writer's per-request steps, the commit,
     * the answer) was otherwise compiled in a client's first bulk load or PUTs, where C2 took a
     * core. Round 1 after a restart, nine pairs: PUT 2,147 against 1,842 documents a second, the
     * first view build 1.72 against 2.13 s (medians; docs/benchmarks.md, issue 27).
     */
    private static final int SMALL_REQUESTS = 700;
    private static final int SMALL_BATCH = 4;
    private static final String DB = "/warmup";
    /**
     * Builds of the views over the warm-up's documents. A build's per-batch loops reach C2 only
     * after tens of thousands of turns (HotSpot's back-edge threshold is 40,000), which one build
     * of 20,000 documents does not give: with three, mapping and row encoding
     * ({@code ViewIndexer.mapAll}, {@code encodeRows}) are compiled before a client's first build
     * (JFR, src-it/bench/first-round-jit.sh; the write steps and the trees' bulk load still are not).
     * Round 1 after a restart, 16 pairs (10 with 8,000 warm-up PUTs, 6 with 16,000): the view build
     * faster in 12, the bulk load in 13 (docs/benchmarks.md, issue 27, "three warm-up view builds").
     */
    static final int VIEW_BUILDS = 3;
    /**
     * Changes per segment of the view build: the warm-up's documents are cut into several, so the
     * build takes the path a large database's first build takes (workers, then the trees' bulk load).
     */
    private static final int SEGMENT_DOCS = 1_000;
    /**
     * The two commonest shapes of a view: a string key counted, an array key with numbers
     * summarized. Build {@code k} has a comment of its own in each map, so a signature of its own.
     */
    static String design(int k) {
        String mark = " /* " + k + " */";
        return "{\"views\":{"
                + "\"by_type\":{\"map\":\"function (doc) { emit(doc.type, 1);" + mark + " }\",\"reduce\":\"_count\"},"
                + "\"scores\":{\"map\":\"function (doc) { emit([doc.type, doc.n % 100], doc.score);" + mark + " }\",\"reduce\":\"_stats\"}}}";
    }

    /**
     * @param docs documents loaded and indexed (the bulk and the index build's path)
     * @param requests small requests sent after the build, a third of each kind
     */
    record Plan(int docs, int requests) {
        boolean none() {
            return docs <= 0 && requests <= 0;
        }
    }

    /** What was sent, how long it took, and the loopback port the throwaway server had. */
    record Result(int docs, int requests, long millis, int port) {}

    private WarmUp() {}

    /**
     * Runs {@code plan} against a throwaway server, which is gone when this returns;
     * {@code beforeRequest} runs before each request (to give way to other work).
     */
    static Result run(Plan plan, Runnable beforeRequest) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        int sent = 0;
        int port;
        try (Throwaway t = Throwaway.open();
             Client c = t.client(beforeRequest)) {
            port = t.server.port();
            c.send("PUT", DB, null);
            int small = Math.min(plan.docs(), SMALL_REQUESTS * SMALL_BATCH);
            for (int i = 0; i < plan.docs(); ) {
                int n = i < small ? SMALL_BATCH : BATCH;
                StringBuilder b = new StringBuilder("{\"docs\":[");
                for (int j = i; j < Math.min(plan.docs(), i + n); j++) b.append(j == i ? "" : ",").append(doc(j));
                c.send("POST", DB + "/_bulk_docs", b.append("]}").toString());
                i += n;
            }
            c.send("POST", DB + "/_index", "{\"index\":{\"fields\":[\"type\",\"score\"]},\"ddoc\":\"warm\",\"name\":\"type-score\"}");
            for (int k = 0; k < VIEW_BUILDS; k++) {
                String ddoc = DB + "/_design/views" + k; // the same views under a new signature: built again
                c.send("PUT", ddoc, design(k));
                c.send("GET", ddoc + "/_view/by_type?group=true", null); // builds both views
            }
            c.send("GET", DB + "/_design/views0/_view/scores?group_level=1", null);
            int span = Math.max(1, plan.docs());
            for (int i = 0; sent < plan.requests(); i++) {
                String type = "t" + i % 10;
                int lo = (int) ((i * 7919L) % span);
                switch (i % 3) {
                    case 0 -> c.send("POST", DB + "/_find", "{\"selector\":{\"type\":\"" + type + "\",\"score\":{\"$gt\":" + lo
                            + "}},\"sort\":[{\"type\":\"asc\"},{\"score\":\"asc\"}],\"limit\":25}");
                    case 1 -> c.send("POST", DB + "/_find", "{\"selector\":{\"type\":\"" + type + "\",\"score\":{\"$gte\":" + lo
                            + "}},\"fields\":[\"_id\",\"score\"],\"limit\":25}");
                    default -> c.send("GET", plan.docs() > 0 ? DB + "/w" + lo : DB, null);
                }
                sent++;
            }
        }
        return new Result(Math.max(0, plan.docs()), sent, (System.nanoTime() - t0) / 1_000_000, port);
    }

    /**
     * Single-document PUTs of new documents from {@link #WRITERS} connections at once, as clients
     * write, to a throwaway server of its own. Meant to run once HotSpot's compile queue has
     * drained ({@link #awaitQuietCompiler}). While the queue is long (hundreds of methods at start,
     * more with the AOT cache) HotSpot raises its thresholds with it, and with the cache a method
     * its training run compiled only inlined in a caller stays in C1's code until its calls,
     * counted from the training run's, pass about 50,000. The write path's per-document methods are
     * such methods; they were compiled by C2 in the first client's measured writes. This pass adds
     * its calls to the training run's counts (the cache keeps them) and to the start's, so they
     * cross in the pass or in a client's first writes (docs/benchmarks.md, issue 27, "the write pass").
     *
     * @return the documents written (all of {@code puts}, or it throws) and the requests sent
     */
    static Result writes(int puts, Runnable beforeRequest) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        int port;
        try (Throwaway t = Throwaway.open(); Client c = t.client(beforeRequest)) {
            port = t.server.port();
            c.send("PUT", DB, null);
            List<Thread> writers = new ArrayList<>();
            AtomicReference<Exception> failed = new AtomicReference<>();
            for (int w = 0; w < WRITERS; w++) {
                int first = w;
                writers.add(Thread.ofPlatform().name("warmup-writer-" + w).daemon().start(() -> {
                    try (Client own = t.client(beforeRequest)) {
                        for (int n = first; n < puts && failed.get() == null; n += WRITERS) own.send("PUT", DB + "/w" + n, doc(n));
                    } catch (Exception e) {
                        failed.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread w : writers) w.join();
            if (failed.get() instanceof IOException e) throw e;
            if (failed.get() != null) throw new IOException("a warm-up writer failed", failed.get());
        }
        int docs = Math.max(0, puts);
        return new Result(docs, docs + 1, (System.nanoTime() - t0) / 1_000_000, port);
    }

    /** Connections {@link #writes} uses at once: couchbench's PUT clients, and enough to share a commit's fsync. */
    static final int WRITERS = 4;

    /**
     * Returns true once HotSpot's compilers used under 5 % of the time for half a second, false
     * if they did not within {@code max} (a busy server: its clients are warming it anyway) or
     * if this VM does not report compile time.
     */
    static boolean awaitQuietCompiler(Duration max) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) return false;
        long deadline = System.nanoTime() + max.toNanos();
        long before = jit.getTotalCompilationTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(500);
            long now = jit.getTotalCompilationTime();
            if (now - before < 25) return true;
            before = now;
        }
        return false;
    }

    /** A server over an in-memory store, on a loopback port and with an admin of its own, for one warm-up. */
    private static final class Throwaway implements AutoCloseable {
        private final String password = UUID.randomUUID().toString();
        private final List<AutoCloseable> opened = new ArrayList<>();
        private ChaiseHttp server;

        static Throwaway open() throws InterruptedException {
            Throwaway t = new Throwaway();
            try {
                // One PBKDF2 iteration: the password is checked once, then the authenticator's cache answers.
                HttpConfig http = HttpConfig.defaults().withPort(0).withAuth(HttpConfig.Auth.defaults().withIterations(1));
                IniConfigStore config = new IniConfigStore(IniConfig.parse("[chaise]\naccess_log = false\n[admins]\nwarmup = "
                        + ServerAdmins.stored(t.password, http.auth()) + "\n", "warm-up"), null);
                ViewsModule.Options viewOptions = new ViewsModule.Options(ViewsModule.Options.defaults().workers(), SEGMENT_DOCS);
                KvStore kv = t.add(EmbeddedKvStore.open(EmbeddedOptions.inMemory()));
                Storage storage = t.add(new Storage(kv, SecurityObject.ADMIN_ONLY_JSON));
                GraalJsEngine js = t.add(GraalJsEngine.createDefault());
                ViewsModule views = t.add(new ViewsModule(storage, js, viewOptions).useJobQueue(new JobQueue(kv, "warmup"), 2, Duration.ofSeconds(60)));
                t.server = t.add(new ChaiseHttp(http, storage, views, config, List.of()).start());
                return t;
            } catch (InterruptedException | RuntimeException e) {
                t.closeQuietly(e);
                throw e;
            }
        }

        private <T extends AutoCloseable> T add(T resource) {
            opened.add(resource);
            return resource;
        }

        Client client(Runnable beforeRequest) throws IOException {
            return new Client(server.port(), "warmup", password, beforeRequest);
        }

        private void closeQuietly(Exception cause) {
            try {
                close();
            } catch (IOException e) {
                cause.addSuppressed(e);
            }
        }

        /** Closes what was opened, last first. */
        @Override
        public void close() throws IOException {
            IOException first = null;
            for (int i = opened.size() - 1; i >= 0; i--) {
                try {
                    opened.get(i).close();
                } catch (Exception e) {
                    if (first == null) first = e instanceof IOException io ? io : new IOException(e);
                    else first.addSuppressed(e);
                }
            }
            opened.clear();
            if (first != null) throw first;
        }
    }

    /**
     * One full collection, after the request path's warm-up and before the JavaScript engine's
     * (placed after it, the first view build was slower in two A/Bs of three, for a reason not
     * found: it was not the collector's pauses). What the start-up leaves alive,
     * about 11 MB, otherwise stayed in the young generation and was copied by each young pause
     * until it had survived 15 of them, which fell inside the first client's load: a 100,000-document
     * bulk load's young pauses took 73-95 ms in all instead of 21-35 (docs/benchmarks.md, issue 27, "the start-up's
     * survivors"). The heap keeps its size: after a full collection G1 would shrink it to a few times
     * what is live, and the first load would pay for growing it again in smaller young generations.
     *
     * @return the milliseconds it took
     */
    static long settleHeap() {
        long t0 = System.nanoTime();
        HotSpotDiagnosticMXBean vm = null;
        String ratio = null;
        try {
            vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            ratio = vm.getVMOption(MAX_HEAP_FREE_RATIO).getValue();
            vm.setVMOption(MAX_HEAP_FREE_RATIO, "100");
        } catch (RuntimeException notHotSpot) {
            vm = null; // another VM, or the flag is not manageable there: collect all the same
        }
        try {
            System.gc();
        } finally {
            if (vm != null) vm.setVMOption(MAX_HEAP_FREE_RATIO, ratio);
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    static final String MAX_HEAP_FREE_RATIO = "MaxHeapFreeRatio";

    /** A document of about 300 bytes, shaped like an application's. */
    private static String doc(int n) {
        return "{\"_id\":\"w" + n + "\",\"type\":\"t" + n % 10 + "\",\"n\":" + n + ",\"score\":" + (n * 7919L) % 100_000
                + ",\"tags\":[\"a" + n % 7 + "\",\"b\"],\"name\":\"user-" + n + "\",\"created\":\"2024-01-01T00:00:00Z\","
                + "\"text\":\"warm-up text of a few dozen bytes, like a real field, and then some more of it\"}";
    }

    /**
     * One kept-alive HTTP/1.1 connection: a request, then its whole answer. Any answer but 2xx fails
     * the warm-up, which is then only logged. Not the JDK's HttpClient: with it the warm-up took
     * 6.9-7.3 s and 14 s of CPU on an idle machine instead of 5.2-5.3 s and 11 s, time taken from
     * the clients of a server that just started.
     */
    private static final class Client implements AutoCloseable {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;
        private final String auth;
        private final Runnable beforeRequest;

        Client(int port, String user, String password, Runnable beforeRequest) throws IOException {
            this.beforeRequest = beforeRequest;
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(60_000);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream());
            auth = "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        }

        /** Sends a request and reads its whole answer. */
        void send(String method, String path, String json) throws IOException {
            beforeRequest.run();
            byte[] body = json == null ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
            String head = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + auth + "\r\nAccept: application/json\r\n"
                    + (json == null ? "" : "Content-Type: application/json\r\n") + "Content-Length: " + body.length + "\r\n\r\n";
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            String status = line();
            long length = -1;
            boolean chunked = false;
            for (String h = line(); !h.isEmpty(); h = line()) {
                int colon = h.indexOf(':');
                String name = colon < 0 ? h : h.substring(0, colon).strip();
                String value = colon < 0 ? "" : h.substring(colon + 1).strip();
                if (name.equalsIgnoreCase("Content-Length")) length = Long.parseLong(value);
                if (name.equalsIgnoreCase("Transfer-Encoding") && value.equalsIgnoreCase("chunked")) chunked = true;
            }
            if (chunked) {
                for (long n = Long.parseLong(line().split(";")[0].strip(), 16); n > 0; n = Long.parseLong(line().split(";")[0].strip(), 16)) {
                    skip(n);
                    line();
                }
                while (!line().isEmpty()) { } // trailers
            } else if (length > 0) {
                skip(length);
            }
            if (!status.startsWith("HTTP/1.1 2")) throw new IOException(method + " " + path + " answered " + status);
        }

        private void skip(long n) throws IOException {
            in.skipNBytes(n); // EOFException if the connection closed
        }

        private String line() throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream(64);
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) throw new IOException("connection closed");
                if (c != '\r') b.write(c);
            }
            return b.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
