package dev.chaise.kv.embedded;

import java.nio.file.Path;

/**
 * How to open the embedded engine.
 *
 * @param directory the RocksDB directory, or null for an in-memory engine (RocksDB on a memory env)
 * @param sync whether a commit is acknowledged only after its batch's fsync
 * @param faults injected commit failures, {@link FaultInjection#NONE} in production
 */
public record EmbeddedOptions(Path directory, boolean sync, FaultInjection faults) {
    public static EmbeddedOptions onDisk(Path directory) {
        return new EmbeddedOptions(directory, true, FaultInjection.NONE);
    }

    public static EmbeddedOptions inMemory() {
        return new EmbeddedOptions(null, false, FaultInjection.NONE);
    }

    public EmbeddedOptions withFaults(FaultInjection f) {
        return new EmbeddedOptions(directory, sync, f);
    }

    public boolean isInMemory() {
        return directory == null;
    }
}
