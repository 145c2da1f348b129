package dev.chaise.http;

import dev.chaise.storage.Storage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Whether storage can serve, for {@code /_up}: one read (a read version and a key) bounded in time,
 * so a load balancer hears 503 within seconds when the FoundationDB cluster is unreachable or the
 * embedded engine is closed, instead of a hang. The answer is kept for a second, so frequent
 * health checks cost one read a second. While the server stops, the answer is that it stops.
 */
public final class StorageProbe {
    static final long TIMEOUT_MS = 2_000;
    private static final long KEEP_NANOS = TimeUnit.SECONDS.toNanos(1);
    private final Storage storage;
    private volatile String stopping;
    private volatile long checkedAt = System.nanoTime() - KEEP_NANOS;
    private volatile String last;
    private CompletableFuture<String> inFlight; // guarded by this

    public StorageProbe(Storage storage) {
        this.storage = storage;
    }

    public void stopping(String why) {
        stopping = why;
    }

    /**
     * The read, on a platform thread: a virtual one could wait behind busy carriers and make a
     * loaded server report its storage unusable. A read that hangs is waited on again by the next
     * check rather than joined by another thread.
     */
    private synchronized CompletableFuture<String> read() {
        if (inFlight != null && !inFlight.isDone()) return inFlight;
        CompletableFuture<String> f = new CompletableFuture<>();
        inFlight = f;
        Thread.ofPlatform().name("up-probe").daemon().start(() -> {
            try {
                storage.checkReadable();
                f.complete(null);
            } catch (RuntimeException e) {
                f.complete("storage (" + storage.backendName() + ") is not usable: " + e.getMessage());
            }
        });
        return f;
    }

    /** @return null when storage answers, else why not */
    public String unusableReason() {
        if (stopping != null) return stopping;
        long now = System.nanoTime();
        if (now - checkedAt < KEEP_NANOS) return last;
        CompletableFuture<String> f = read();
        String r;
        try {
            r = f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            r = "storage (" + storage.backendName() + ") did not answer a read within " + TIMEOUT_MS + " ms";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            r = "interrupted";
        } catch (ExecutionException e) {
            r = String.valueOf(e.getCause());
        }
        last = r;
        checkedAt = System.nanoTime();
        return r;
    }
}
