package dev.chaise.storage;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Storage on the durable embedded engine in a directory of its own, which {@link #close()} deletes. */
public final class BenchStore implements AutoCloseable {
    private final Path dir;
    private final KvStore kv;
    private final Storage storage;

    private BenchStore(Path dir) {
        this.dir = dir;
        this.kv = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
        this.storage = new Storage(kv, "{}");
    }

    /** A new store in a new temporary directory named after {@code name}. */
    public static BenchStore open(String name) throws IOException {
        return new BenchStore(Files.createTempDirectory(name));
    }

    public Storage storage() {
        return storage;
    }

    @Override
    public void close() throws IOException {
        storage.close();
        kv.close();
        BenchDocs.delete(dir);
    }
}
