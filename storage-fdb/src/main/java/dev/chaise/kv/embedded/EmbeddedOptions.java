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
 */
public record EmbeddedOptions(Path directory, boolean sync, FaultInjection faults, Duration commitTimeout) {
    /** A commit takes milliseconds; this long means a stalled disk or a bug, and the caller gets an answer. */
    public static final Duration DEFAULT_COMMIT_TIMEOUT = Duration.ofSeconds(30);

    public static EmbeddedOptions onDisk(Path directory) {
        return new EmbeddedOptions(directory, true, FaultInjection.NONE, DEFAULT_COMMIT_TIMEOUT);
    }

    public static EmbeddedOptions inMemory() {
        return new EmbeddedOptions(null, false, FaultInjection.NONE, DEFAULT_COMMIT_TIMEOUT);
    }

    public EmbeddedOptions withFaults(FaultInjection f) {
        return new EmbeddedOptions(directory, sync, f, commitTimeout);
    }

    public EmbeddedOptions withCommitTimeout(Duration timeout) {
        return new EmbeddedOptions(directory, sync, faults, timeout);
    }

    public boolean isInMemory() {
        return directory == null;
    }
}
