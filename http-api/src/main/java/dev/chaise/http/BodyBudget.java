package dev.chaise.http;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The heap that request bodies read whole (JSON) may take at once, shared by one server's
 * requests. A body read whole lives as bytes and then as its parsed JSON, a few times its size
 * together ({@link #FACTOR}); twelve 60 MB bodies at once ran a 512 MB heap out of memory. A
 * request reserves as its body grows and releases when it ends; one that cannot reserve waits for
 * others to finish, and after {@link #WAIT_SECONDS} gets 503. A body bigger than the whole budget
 * may still be read, alone.
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

    /** Room for a body of {@code bytes}; the units reserved (to {@link #release}). */
    int reserve(long bytes) {
        int n = (int) Math.min(units, (bytes * FACTOR + UNIT - 1) / UNIT);
        if (n == 0) return 0;
        try {
            if (free.tryAcquire(n) || free.tryAcquire(n, waitMillis, TimeUnit.MILLISECONDS)) return n;
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
