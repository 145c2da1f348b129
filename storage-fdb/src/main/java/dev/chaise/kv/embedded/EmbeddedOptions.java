package dev.chaise.kv.embedded;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How to open the embedded engine.
 *
 * @param directory the RocksDB directory, or null for an in-memory engine (RocksDB on a memory env)
 * @param sync whether a commit is acknowledged only after its batch's fsync
 * @param faults injected commit failures, {@link FaultInjection#NONE} in production
 * @param commitTimeout the longest a commit waits for the sequencer before it gives up (1031 if
 *     its request was still queued, 1021 if it may have been written)
 * @param idleFlush when the store flushes its memtable while nothing uses it, or null never
 */
public record EmbeddedOptions(Path directory, boolean sync, FaultInjection faults, Duration commitTimeout, IdleFlush idleFlush) {
    /** A commit takes milliseconds; this long means a stalled disk or a bug, and the caller gets an answer. */
    public static final Duration DEFAULT_COMMIT_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Flush the memtable once the process has used under {@code maxCpuShare} of one core for
     * {@code after}, if the memtable holds at least {@code minBytes}: the next burst of writes
     * then starts with an empty memtable instead of paying for a flush in its middle.
     */
    public record IdleFlush(Duration after, long minBytes, double maxCpuShare) {
        public static final IdleFlush DEFAULT = new IdleFlush(Duration.ofSeconds(5), 64L << 20, 0.05);
    }

    public static EmbeddedOptions onDisk(Path directory) {
        return new EmbeddedOptions(directory, true, FaultInjection.NONE, DEFAULT_COMMIT_TIMEOUT, IdleFlush.DEFAULT);
    }

    /** No idle flush: a memory store's flush only moves its data from one part of memory to another. */
    public static EmbeddedOptions inMemory() {
        return new EmbeddedOptions(null, false, FaultInjection.NONE, DEFAULT_COMMIT_TIMEOUT, null);
    }

    public EmbeddedOptions withFaults(FaultInjection f) {
        return new EmbeddedOptions(directory, sync, f, commitTimeout, idleFlush);
    }

    public EmbeddedOptions withCommitTimeout(Duration timeout) {
        return new EmbeddedOptions(directory, sync, faults, timeout, idleFlush);
    }

    public EmbeddedOptions withIdleFlush(IdleFlush flush) {
        return new EmbeddedOptions(directory, sync, faults, commitTimeout, flush);
    }

    public boolean isInMemory() {
        return directory == null;
    }
}
