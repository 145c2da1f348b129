package dev.chaise.http;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A request's body as it arrives. The event loop offers the decoder's buffers; the handler's
 * thread reads them as a stream (large uploads: attachments) or all at once ({@link #bytes}).
 * Either way at most {@code limit} bytes are accepted ({@code max_http_request_size}): more is
 * 413. The connection pauses reading while {@link #HIGH_WATER} bytes wait unread, so a slow
 * consumer never makes the server hold a whole upload.
 */
public final class RequestBody {
    static final int HIGH_WATER = 1 << 20;
    /** Budget is reserved for a body of unknown length this much at a time. */
    static final int RESERVE_STEP = 256 << 10;
    private static final int LOW_WATER = 256 << 10;
    /** The largest array {@link #bytes} allocates at its declared length at once. */
    private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

    private final long limit;
    private final long bufferLimit;
    private final long waitNanos;
    private final Runnable drained;
    private final Runnable wanted;
    private final BodyBudget budget;
    private final long expected;
    private int reserved; // units of budget held until close
    private long covered; // bytes of body those units cover
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<ByteBuf> pending = new ArrayDeque<>();
    private long buffered;
    private long received;
    private boolean ended;
    private boolean closed;
    private RuntimeException failure;
    private boolean taken;
    private byte[] all;

    /**
     * @param limit the most a client may send ({@code max_http_request_size})
     * @param bufferLimit the most {@link #bytes} holds ({@code max_buffered_body_size})
     * @param waitNanos how long a reader waits for the client's next bytes before giving up
     * @param drained run (from the reader's thread) when the unread bytes fall below the low water mark
     * @param wanted run once, from the reader's thread, when the handler first asks for the body
     *     ({@code Expect: 100-continue} is answered then: a request refused before that need not send it)
     * @param budget the server's memory for bodies read whole; null for none
     * @param expected the declared length, or -1
     */
    RequestBody(long limit, long bufferLimit, long waitNanos, Runnable drained, Runnable wanted, BodyBudget budget, long expected) {
        this.limit = limit;
        this.bufferLimit = bufferLimit;
        this.waitNanos = waitNanos;
        this.drained = drained;
        this.wanted = wanted;
        this.budget = budget;
        this.expected = expected;
    }

    /** A body that has fully arrived (and tests' bodies). */
    public static RequestBody of(byte[] bytes) {
        RequestBody b = new RequestBody(Long.MAX_VALUE, Long.MAX_VALUE, 0, () -> {}, () -> {}, null, bytes.length);
        b.all = bytes;
        b.ended = true;
        b.received = bytes.length;
        return b;
    }

    /** The most {@link #bytes} holds ({@code max_buffered_body_size}). */
    long bufferLimit() {
        return bufferLimit;
    }

    // ------------------------------------------------------------------ the event loop's side

    /** Takes ownership of {@code buf}. */
    void offer(ByteBuf buf) {
        lock.lock();
        try {
            if (closed || failure != null || !buf.isReadable()) {
                buf.release();
                return;
            }
            received += buf.readableBytes();
            if (received > limit) {
                buf.release();
                failure = HttpError.tooLarge();
            } else {
                pending.add(buf);
                buffered += buf.readableBytes();
            }
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void end() {
        lock.lock();
        try {
            ended = true;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The client went away, or the body is malformed: readers get {@code why}. */
    void fail(RuntimeException why) {
        lock.lock();
        try {
            if (!ended && failure == null) failure = why;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Releases what is unread, and the memory budget held; later bytes are dropped. */
    void close() {
        int held;
        lock.lock();
        try {
            closed = true;
            ByteBuf b;
            while ((b = pending.poll()) != null) b.release();
            buffered = 0;
            held = reserved;
            reserved = 0;
        } finally {
            lock.unlock();
        }
        if (budget != null) budget.release(held);
    }

    /** Whether the reader should stop reading the socket for now. */
    boolean full() {
        lock.lock();
        try {
            return buffered >= HIGH_WATER && !closed;
        } finally {
            lock.unlock();
        }
    }

    /** Whether the whole body arrived, so the connection can frame the next request. */
    boolean complete() {
        lock.lock();
        try {
            return ended && failure == null;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ the handler's side

    /** The whole body; 413 past either limit. Read once, then cached. */
    public byte[] bytes() {
        lock.lock();
        try {
            if (all != null) return all;
        } finally {
            lock.unlock();
        }
        byte[] b = expected >= 0 && expected <= Math.min(bufferLimit, MAX_ARRAY) ? readDeclared(stream(), (int) expected)
                : readAll(stream(), bufferLimit);
        lock.lock();
        try {
            all = b;
        } finally {
            lock.unlock();
        }
        return b;
    }

    /**
     * All of {@code in}; 413 past {@code limit} bytes. Memory is reserved from the server's
     * {@link BodyBudget} as the bytes arrive (the declared length at once), so that many large
     * bodies at once wait their turn instead of running the heap out.
     */
    byte[] readAll(InputStream in, long limit) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (in) {
            byte[] buf = new byte[16384];
            for (int n; (n = in.read(buf)) > 0; ) {
                if (out.size() + (long) n > limit) throw HttpError.tooLarge();
                cover(out.size() + (long) n, limit);
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            throw HttpError.badRequest("Could not read the request body");
        }
        return out.toByteArray();
    }

    /**
     * A body of declared length {@code size} (the HTTP decoder delivers no more), read into one
     * array of that size: a 300 KB {@code _bulk_docs} body grown into a buffer and copied out took
     * 0.27 ms, on the request's path before its parse. Short only if the body was closed early.
     */
    private byte[] readDeclared(InputStream in, int size) {
        cover(size, size);
        byte[] all = new byte[size];
        int n = 0;
        try (in) {
            for (int r; n < size && (r = in.read(all, n, size - n)) > 0; ) n += r;
        } catch (IOException e) {
            throw HttpError.badRequest("Could not read the request body");
        }
        return n == size ? all : Arrays.copyOf(all, n);
    }

    /**
     * {@link #readAll} for a body that inflates (gzip): room for all it may inflate to is reserved
     * first, waiting if need be, so that two bodies inflating at once never fail each other.
     */
    byte[] readAllInflated(InputStream in, long limit) {
        if (budget != null && reserved < budget.capacity()) {
            int n = budget.reserve(limit, true, reserved);
            lock.lock();
            try {
                reserved += n;
                covered += limit;
            } finally {
                lock.unlock();
            }
        }
        return readAll(in, limit);
    }

    /** Reserves budget for {@code size} bytes held: the declared length at once, else in steps. */
    private void cover(long size, long limit) {
        if (budget == null || size <= covered || reserved >= budget.capacity()) return;
        long want = Math.min(limit, Math.max(Math.max(size, expected), covered + RESERVE_STEP)) - covered;
        int n = budget.reserve(want, reserved == 0, reserved);
        lock.lock();
        try {
            reserved += n;
            covered += want;
        } finally {
            lock.unlock();
        }
    }

    /** The body as a stream, readable once. Failures surface as {@link HttpError}s (413) or {@link ResponseStream.ClientGoneException}. */
    public InputStream stream() {
        lock.lock();
        try {
            if (all != null) return new java.io.ByteArrayInputStream(all);
            if (taken) throw new IllegalStateException("the request body was already read");
            taken = true;
        } finally {
            lock.unlock();
        }
        wanted.run();
        return new In();
    }

    private final class In extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] dst, int off, int len) {
            if (len == 0) return 0;
            boolean signal;
            int n;
            lock.lock();
            try {
                long deadline = System.nanoTime() + waitNanos;
                while (pending.isEmpty()) {
                    if (failure != null) throw failure;
                    if (ended || closed) return -1;
                    long left = deadline - System.nanoTime();
                    if (left <= 0) throw new ResponseStream.ClientGoneException();
                    arrived.awaitNanos(left);
                }
                ByteBuf head = pending.peek();
                n = Math.min(len, head.readableBytes());
                head.readBytes(dst, off, n);
                if (!head.isReadable()) pending.poll().release();
                long before = buffered;
                buffered -= n;
                signal = before >= LOW_WATER && buffered < LOW_WATER;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ResponseStream.ClientGoneException();
            } finally {
                lock.unlock();
            }
            if (signal) drained.run();
            return n;
        }
    }
}
