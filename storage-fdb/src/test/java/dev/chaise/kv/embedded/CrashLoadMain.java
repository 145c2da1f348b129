package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.US_ASCII;

import dev.chaise.kv.MutationType;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.rocksdb.FlushOptions;
import org.rocksdb.RocksDBException;

/**
 * The child process of {@link CrashDurabilityTest}: commits transactions from several threads
 * until it is killed, and after each commit returns writes {@code ACK <n>} to stdout. Each adds
 * one to a counter, and every fourth is big (written on a writer thread).
 *
 * <p>Arguments: the store directory, the first transaction number, the number of threads.
 */
public final class CrashLoadMain {
    static final int KEYS_PER_TX = 5;
    private static final long FLUSH_EVERY_MS = 100;

    private CrashLoadMain() {}

    /** The transaction's keys lie in five separate key ranges, so a torn commit would show. */
    static byte[] key(long n, int i) {
        return String.format("c%d/%012d", i, n).getBytes(US_ASCII);
    }

    /** Every fourth transaction is big enough to be written on a writer thread, beside the others of its batch. */
    static byte[] value(long n, int i) {
        return (n + ":" + i + ":" + "x".repeat(n % 4 == 0 ? Sequencer.HAND_OFF_BYTES / KEYS_PER_TX + 100 : 100)).getBytes(US_ASCII);
    }

    /** Every transaction adds one: what survives a crash must count exactly the transactions present. */
    static final byte[] COUNT = "count".getBytes(US_ASCII);
    static final byte[] ONE = {1, 0, 0, 0, 0, 0, 0, 0};

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        AtomicLong next = new AtomicLong(Long.parseLong(args[1]));
        int threads = Integer.parseInt(args[2]);
        FileOutputStream out = new FileOutputStream(FileDescriptor.out); // unbuffered: one write(2) per ack
        EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir));
        // Memtable flushes switch the WAL, so the kill also lands in a recycled WAL (one that
        // overwrites an obsolete log and still holds that log's records past the new ones).
        Thread.ofPlatform().name("flusher").daemon().start(() -> {
            try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
                while (true) {
                    Thread.sleep(FLUSH_EVERY_MS);
                    store.db().flush(flush, List.of(store.dataCf(), store.metaCf()));
                }
            } catch (InterruptedException | RocksDBException e) {
                throw new IllegalStateException(e);
            }
        });
        for (int t = 0; t < threads; t++) {
            Thread.ofPlatform().name("load-" + t).start(() -> {
                while (true) {
                    long n = next.getAndIncrement();
                    store.run(tx -> {
                        for (int i = 0; i < KEYS_PER_TX; i++) tx.set(key(n, i), value(n, i));
                        tx.mutate(MutationType.ADD, COUNT, ONE);
                        return null;
                    });
                    byte[] ack = ("ACK " + n + "\n").getBytes(US_ASCII);
                    synchronized (out) {
                        try {
                            out.write(ack);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                }
            });
        }
    }
}
