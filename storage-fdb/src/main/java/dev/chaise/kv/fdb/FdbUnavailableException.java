package dev.chaise.kv.fdb;

/**
 * The fdb backend cannot start in this process: fdb-java's JNI library needs the FoundationDB
 * client library ({@code libfdb_c}), which is installed separately from the jar.
 */
public final class FdbUnavailableException extends RuntimeException {
    public FdbUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
