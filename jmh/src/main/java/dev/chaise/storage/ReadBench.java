package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * A document GET below HTTP, on the embedded engine on disk: the database opened for a user
 * through the door, the winner read with its body, rendered as the user may see it and written
 * as JSON bytes, as {@code DocumentHandlers.get} does for couchbench's GET phase: in one
 * transaction ({@link Storage#read}, {@link #readInOne}, as the handler does now) or opened in a
 * transaction of its own first ({@link #openAndGet}, as it did before issue 27). 5,000 couchbench
 * documents, read in turn, all in the memtable as on a server that just took them.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ReadBench {
    private static final int DOCS = 5_000;
    private static final String DB = "bench";
    private static final UserCtx USER = new UserCtx("bench", List.of("reader"), "default");

    private Path dir;
    private KvStore kv;
    private Storage storage;
    private String[] ids;
    private int next;

    @Setup
    public void open() throws IOException {
        dir = Files.createTempDirectory("chaise-read-bench");
        kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
        storage = new Storage(kv, "{\"members\":{\"roles\":[\"reader\"]}}");
        ids = BenchDocs.load(storage.create(DB), DOCS);
    }

    @TearDown
    public void close() throws IOException {
        storage.close();
        kv.close();
        BenchDocs.delete(dir);
    }

    private String nextId() {
        String id = ids[next];
        next = (next + 1) % DOCS;
        return id;
    }

    /** Open for the user, then read and render in the read's transaction, then the JSON bytes. */
    @Benchmark
    public byte[] openAndGet() throws IOException {
        String id = nextId();
        SecuredDb db = storage.open(DB, USER, SecuredDb.Level.MEMBER);
        db.checkReader(id);
        ObjectNode body = db.database().read(r -> db.render(r.get(id, null, false), DocumentJson.Meta.NONE));
        return Json.MAPPER.writeValueAsBytes(body);
    }

    /** The same in one transaction ({@link Storage#read}): the database's directory entry read once. */
    @Benchmark
    public byte[] readInOne() throws IOException {
        String id = nextId();
        ObjectNode body = storage.read(DB, USER, SecuredDb.Level.MEMBER, (db, r) -> {
            db.checkReader(id);
            return db.render(r.get(id, null, false), DocumentJson.Meta.NONE);
        });
        return Json.MAPPER.writeValueAsBytes(body);
    }
}
