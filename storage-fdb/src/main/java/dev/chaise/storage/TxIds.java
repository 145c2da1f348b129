package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RFC D's guard against {@code commit_unknown_result}: every write transaction stores its id
 * with its result; after a 1021 the next attempt reads the id in its own transaction, so it
 * either returns the first attempt's result or runs again, and never writes a second changes row.
 *
 * <pre>
 * (0, "txids", TxId) = (Result, WallClockMillis)
 * </pre>
 *
 * Ids of acknowledged commits are cleared in the background, in batches; ids left by a crashed
 * process are swept once they are older than {@link #ORPHAN_AGE_MS}.
 */
public final class TxIds implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TxIds.class);
    static final long ORPHAN_AGE_MS = TimeUnit.MINUTES.toMillis(10);
    private static final int CLEAR_BATCH = 5_000;

    private final KvStore kv;
    private final ConcurrentLinkedQueue<byte[]> done = new ConcurrentLinkedQueue<>();
    private final Thread cleaner;
    private volatile boolean running = true;

    public TxIds(KvStore kv) {
        this.kv = kv;
        this.cleaner = Thread.ofVirtual().name("chaise-txid-cleaner").start(this::cleanLoop);
    }

    /**
     * Runs a write transaction guarded by a transaction id. {@code result} encodes the body's
     * result so a retry after 1021 can return what the first attempt did.
     */
    public <T> T run(Function<Transaction, T> body, Function<T, byte[]> encode, Function<byte[], T> decode) {
        byte[] id = DatabaseDirectory.randomBytes(16);
        byte[] key = key(id);
        T result = kv.run(tx -> {
            T r = body.apply(tx);
            tx.set(key, Tuple.from(encode.apply(r), System.currentTimeMillis()).pack());
            return r;
        }, tx -> lookup(tx, key).map(decode));
        done.add(key);
        return result;
    }

    private static Optional<byte[]> lookup(ReadTransaction tx, byte[] key) {
        byte[] v = tx.get(key);
        return v == null ? Optional.empty() : Optional.of(Tuple.fromBytes(v).getBytes(0));
    }

    static byte[] key(byte[] id) {
        return Keys.concat(KeySpace.txIds(), Tuple.from((Object) id).pack());
    }

    /** How many ids are waiting to be cleared (for tests and metrics). */
    public int pending() {
        return done.size();
    }

    /** Clears acknowledged ids now; returns how many. */
    public int clearAcknowledged() {
        List<byte[]> batch = new ArrayList<>();
        byte[] k;
        while (batch.size() < CLEAR_BATCH && (k = done.poll()) != null) batch.add(k);
        if (batch.isEmpty()) return 0;
        kv.run(tx -> {
            for (byte[] key : batch) tx.clear(key);
            return null;
        });
        return batch.size();
    }

    /** Clears ids older than {@link #ORPHAN_AGE_MS}, left by processes that died before clearing. */
    public int sweepOrphans() {
        long cutoff = System.currentTimeMillis() - ORPHAN_AGE_MS;
        byte[] begin = Keys.concat(KeySpace.txIds(), new byte[] {0x00});
        byte[] end = Keys.concat(KeySpace.txIds(), new byte[] {(byte) 0xff});
        return kv.run(tx -> {
            int n = 0;
            try (var it = tx.snapshot().getRange(begin, end, CLEAR_BATCH, false)) {
                while (it.hasNext()) {
                    KeyValue e = it.next();
                    if (Tuple.fromBytes(e.value()).getLong(1) < cutoff) {
                        tx.clear(e.key());
                        n++;
                    }
                }
            }
            return n;
        });
    }

    private void cleanLoop() {
        long lastSweep = 0;
        while (running) {
            try {
                Thread.sleep(1_000);
                while (clearAcknowledged() == CLEAR_BATCH) {
                    // keep up under load
                }
                if (System.currentTimeMillis() - lastSweep > ORPHAN_AGE_MS / 2) {
                    sweepOrphans();
                    lastSweep = System.currentTimeMillis();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (running) log.warn("clearing transaction ids failed; will retry", e);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        cleaner.interrupt();
        try {
            cleaner.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
