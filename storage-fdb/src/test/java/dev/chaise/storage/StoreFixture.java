package dev.chaise.storage;

import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory engine and a document store on it, optionally with injected commit faults. The
 * directory's own writes ({@code create}, {@code setRevsLimit}) run without a transaction id, so a
 * 1021 reaches the caller; the helpers here retry them as an operator would.
 */
final class StoreFixture implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    final KvStore kv;
    final DatabaseDirectory dirs;
    final Storage store;

    private StoreFixture(FaultInjection faults) {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(faults));
        store = new Storage(kv, "{}");
        dirs = store.directory();
    }

    static StoreFixture open() {
        return new StoreFixture(FaultInjection.NONE);
    }

    /** 1020, 1007 and 1021 each at {@code each} of the commits that write; half of the 1021s did commit. */
    static StoreFixture withFaults(double each, long seed) {
        return new StoreFixture(new FaultInjection(each, each, each, 0.5, seed));
    }

    /** A database with a fresh name; {@code revsLimit} 0 keeps the default. */
    String newDb(String stem, int revsLimit) {
        String name = stem + "-" + NAMES.incrementAndGet();
        for (int attempt = 0; ; attempt++) {
            try {
                dirs.create(name);
                break;
            } catch (KvException e) {
                if (!e.maybeCommitted() || attempt > 50) throw e;
            } catch (StorageException e) {
                // an earlier attempt ended with 1021 but did create it
                if (e.kind() != StorageException.Kind.FILE_EXISTS || attempt == 0) throw e;
                break;
            }
        }
        if (revsLimit > 0) {
            for (int attempt = 0; ; attempt++) {
                try {
                    store.open(name).setRevsLimit(revsLimit);
                    break;
                } catch (KvException e) {
                    if (!e.maybeCommitted() || attempt > 50) throw e; // setting it again is harmless
                }
            }
        }
        return name;
    }

    long injectedFaults() {
        return kv.timer().count(StoreTimer.Counts.INJECTED_FAULTS);
    }

    long commitsRetried() {
        return kv.timer().count(StoreTimer.Counts.RETRIES);
    }

    Invariants.Report checkInvariants(String db, int revsLimit) {
        return Invariants.check(kv, dirs, db, revsLimit);
    }

    @Override
    public void close() {
        store.close();
        kv.close();
    }
}
