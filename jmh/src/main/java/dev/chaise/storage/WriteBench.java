package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * The write path below HTTP on the durable embedded engine, with couchbench's documents: one new
 * document per transaction (a PUT: the commit path and its fsync) and 1,000 new documents per
 * request (a {@code _bulk_docs}: {@link BatchWriter}, {@link DocumentWriter}, the sequencer's
 * RocksDB write, RocksDB's flushes and compactions). Their cost is spread over threads, so time
 * them by the process's CPU: {@code CpuTime --process} (docs/benchmarks.md, issue 27).
 * {@link #fourClients} is couchbench's PUT phase without HTTP: four committers on virtual threads
 * (as the server's requests run, on as many carriers as cores), so commits meet in group commits
 * and the commit path's hand-offs between threads show.
 * {@link #writeAll1000} is the request thread's share of a {@code _bulk_docs} of 1,000 alone:
 * the batch's size estimate and {@link DocumentWriter#writeAll} in a transaction that is then
 * dropped, so thread CPU ({@code CpuTime} without {@code --process}) measures it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class WriteBench {
    private static final int BULK = 1_000;
    private static final int DISTINCT = 10_000;
    private static final int PRELOAD = 20_000;
    private static final int FOUR_CLIENTS = 4;
    private static final int PUTS_PER_CLIENT = 25;
    /**
     * {@code -Dwritebench.memory=true}: the store in memory, no WAL and no fsync, so a thread's CPU
     * is the write path's alone (the fsync's kernel time moves with the disk's other users).
     */
    private static final String IN_MEMORY = "writebench.memory";
    private static final UserCtx MEMBER = new UserCtx("bench", List.of(), "default");

    private Path dir;
    private KvStore kv;
    private Storage storage;
    private Database db;
    private Storage withRules;
    private final List<ObjectNode> docs = new ArrayList<>(DISTINCT);
    private final AtomicInteger next = new AtomicInteger();

    @Setup(Level.Trial)
    public void open() throws IOException {
        dir = Files.createTempDirectory("chaise-write-bench");
        kv = EmbeddedKvStore.open(Boolean.getBoolean(IN_MEMORY) ? EmbeddedOptions.inMemory() : EmbeddedOptions.onDisk(dir));
        storage = new Storage(kv, "{}");
        db = storage.create("bench");
        // A second Storage on the same store (as a second server would be) with the rules every server wires.
        withRules = new Storage(kv, "{}");
        withRules.addPolicy(new dev.chaise.views.DesignPolicy(new dev.chaise.views.DesignDocChecks(null, new dev.chaise.stats.Stats())));
        withRules.addWriteHook(new dev.chaise.views.index.InteractiveViews(ddoc -> null));
        for (int i = 0; i < DISTINCT; i++) {
            ObjectNode d = BenchDocs.doc(i);
            d.remove("_id");
            docs.add(d);
        }
        for (int i = 0; i < PRELOAD; i += BULK) bulk1000(); // reads for new documents then search a populated store
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        withRules.close();
        storage.close();
        kv.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    /** A new document's update, as the HTTP layer hands it over (the body parsed, fresh per request); ids as couchbench's, increasing. */
    private DocUpdate newDoc() {
        int n = next.getAndIncrement();
        String digits = Integer.toString(n);
        return DocUpdate.edit("d" + "0000000".substring(Math.min(7, digits.length())) + digits, null, false, docs.get(n % DISTINCT).deepCopy());
    }

    @Benchmark
    public List<UpdateResult> put() {
        return db.updateUnchecked(List.of(newDoc()), true);
    }

    /**
     * A document PUT as its handler made it before issue 27's second session: the database opened
     * for a member in a transaction of its own ({@link Storage#open(String, UserCtx, SecuredDb.Level)}),
     * then the write through the door. Timed by the calling thread's CPU: a lone committer leads
     * its own commit.
     */
    @Benchmark
    public List<UpdateResult> openThenPut() {
        return storage.open("bench", MEMBER, SecuredDb.Level.MEMBER).update(List.of(newDoc()), true);
    }

    /** {@link #openThenPut} as the handler makes it now: opened from the cached handle, checked in the write's transaction. */
    @Benchmark
    public List<UpdateResult> openToUpdateThenPut() {
        return storage.openToUpdate("bench", MEMBER, SecuredDb.Level.MEMBER).update(List.of(newDoc()), true);
    }

    /**
     * {@link #openToUpdateThenPut} through the rules a server wires: design documents'
     * (validate_doc_update, read per write transaction unless kept by the directory entry's
     * bytes) and the interactive views' write hook (their definitions, likewise).
     */
    @Benchmark
    public List<UpdateResult> putWithRules() {
        return withRules.openToUpdate("bench", MEMBER, SecuredDb.Level.MEMBER).update(List.of(newDoc()), true);
    }

    /** Four virtual threads, 25 PUTs each, one after another: 100 PUTs a call. */
    @Benchmark
    public void fourClients() throws InterruptedException {
        Thread[] clients = new Thread[FOUR_CLIENTS];
        for (int c = 0; c < clients.length; c++) {
            clients[c] = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < PUTS_PER_CLIENT; i++) db.updateUnchecked(List.of(newDoc()), true);
            });
        }
        for (Thread t : clients) t.join();
    }

    /** What a transaction of {@link BatchWriter} does on its own thread before the commit, for 1,000 new documents. */
    @Benchmark
    public List<UpdateResult> writeAll1000() {
        List<DocUpdate> batch = new ArrayList<>(BULK);
        Map<ObjectNode, Long> sizes = new IdentityHashMap<>();
        for (int i = 0; i < BULK; i++) {
            DocUpdate u = newDoc();
            BatchWriter.storageEstimate(u, sizes);
            batch.add(u);
        }
        Transaction tx = kv.createTransaction();
        try {
            return storage.writer().writeAll(tx, db.handle(tx), batch, true, false, Set.of(), new DocumentWriter.Context(sizes, null));
        } finally {
            tx.close(); // never committed: the database stays as it was
        }
    }

    @Benchmark
    public List<UpdateResult> bulk1000() {
        List<DocUpdate> batch = new ArrayList<>(BULK);
        for (int i = 0; i < BULK; i++) batch.add(newDoc());
        return db.updateUnchecked(batch, true);
    }
}
