package dev.chaise.http;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The heap that request bodies read whole (JSON) may take at once, shared by one server's
 * requests. A body read whole lives as bytes and then as its parsed JSON, a few times its size
 * together ({@link #FACTOR}); twelve 60 MB bodies at once ran a 512 MB heap out of memory. A
 * request reserves as its body grows and releases when it ends. Its first reservation (the
 * declared length, or a step) may wait for others to finish, up to {@link #WAIT_SECONDS}; growing
 * past it (a chunked or gzip body) takes what is free at once or fails: a request that waited
 * while holding could wait on another that waits on it. Either failure is 503. A body bigger than
 * the whole budget may still be read, alone.
 */
final class BodyBudget {
    static final int FACTOR = 4;
    static final long WAIT_SECONDS = 60;
    private static final long UNIT = 1024;

    private final int units;
    private final long waitMillis;
    private final Semaphore free;

    BodyBudget(long bytes, long waitMillis) {
        this.units = (int) Math.max(1, Math.min(Integer.MAX_VALUE, bytes / UNIT));
        this.waitMillis = waitMillis;
        this.free = new Semaphore(units, true);
    }

    /** Three quarters of the heap the JVM may grow to. */
    static BodyBudget ofHeap() {
        return new BodyBudget(Runtime.getRuntime().maxMemory() / 4 * 3, TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    }

    /**
     * Room for {@code bytes} more of a body; the units reserved (to {@link #release}).
     *
     * @param mayWait false when the caller already holds units and could wait on a waiter
     * @param held the units the caller holds already: it never asks for more than the rest
     */
    int reserve(long bytes, boolean mayWait, int held) {
        int n = (int) Math.min(units - held, (bytes * FACTOR + UNIT - 1) / UNIT);
        if (n <= 0) return 0;
        try {
            if (free.tryAcquire(n) || mayWait && free.tryAcquire(n, waitMillis, TimeUnit.MILLISECONDS)) return n;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new HttpError(503, "service_unavailable", "Too many large request bodies at once; try again");
    }

    void release(int n) {
        if (n > 0) free.release(n);
    }

    int capacity() {
        return units;
    }

    int available() {
        return free.availablePermits();
    }
}
