package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.handlers.ChangesArgs.Feed;
import dev.chaise.storage.json.Json;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * How CouchDB writes a feed ({@code _changes}, {@code _db_updates}): {@code normal} and
 * {@code longpoll} wrap the rows in {@code {"results":[…]}}, {@code continuous} sends a line per
 * row and {@code eventsource} an event per row; live feeds scan, wait on a watch for more, send
 * heartbeats, and notice a departed client. The caller scans and says what to end with.
 */
final class FeedWriter {
    /** A live feed rescans at least this often, in case a watch is lost. */
    static final long POLL_MS = 5_000;
    /** How soon a wait notices that the client has gone. */
    static final long ALIVE_CHECK_MS = 250;

    private final ResponseStream out;
    private final Feed feed;
    private long rows;

    FeedWriter(ResponseStream out, Feed feed) {
        this.out = out;
        this.feed = feed;
    }

    /** The opening, before any row. */
    void begin() {
        if (feed == Feed.NORMAL || feed == Feed.LONGPOLL) out.write("{\"results\":[\n");
    }

    /** One row, framed for the feed; {@code id} is the event's id for eventsource. */
    void row(ObjectNode row, String id) {
        String json = Json.write(row);
        switch (feed) {
            case NORMAL, LONGPOLL -> out.write(rows == 0 ? json : ",\r\n" + json);
            case CONTINUOUS -> {
                out.write(json + "\n");
                out.flush();
            }
            case EVENTSOURCE -> {
                out.write("data: " + json + "\nid: " + id + "\n\n");
                out.flush();
            }
        }
        rows++;
    }

    /** Rows sent so far. */
    long rows() {
        return rows;
    }

    /** The closing: {@code members} (such as {@code "last_seq":…}) end the object, or make the continuous feed's last line. */
    void end(String members) {
        switch (feed) {
            case NORMAL, LONGPOLL -> out.write("\n],\n" + members + "}\n");
            case CONTINUOUS -> out.write("{" + members + "}\n");
            case EVENTSOURCE -> { }
        }
    }

    /**
     * A live feed: scans, then waits for a write and scans again, until {@code done}, the first
     * rows of a longpoll, or {@code timeout} without rows and without heartbeats.
     *
     * @param watch armed before each scan, so no write falls between the scan and the wait
     * @param scan reads what there is now and sends it; the rows it sent
     * @param heartbeat milliseconds between heartbeats, or null for none
     */
    void live(Supplier<CompletableFuture<Void>> watch, LongSupplier scan, BooleanSupplier done, Long heartbeat, long timeout) {
        long waitMs = heartbeat != null ? heartbeat : timeout;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (true) {
            CompletableFuture<Void> w = watch.get();
            try {
                long sent = scan.getAsLong();
                if (done.getAsBoolean() || (feed == Feed.LONGPOLL && rows > 0)) return;
                if (sent > 0) deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
                out.flush(); // what we have reaches the client before we wait
                if (!await(w, deadline)) {
                    if (heartbeat == null) return;
                    out.write(feed == Feed.EVENTSOURCE ? "event: heartbeat\ndata: \n\n" : "\n");
                    out.flush();
                    deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
                }
            } finally {
                w.cancel(false);
            }
        }
    }

    /**
     * Waits for a write, the poll interval, or {@code deadline}; false on the deadline. Returns
     * early (true) every {@link #POLL_MS} so a lost watch only delays a change.
     */
    private boolean await(CompletableFuture<Void> watch, long deadline) {
        long poll = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(POLL_MS);
        while (true) {
            if (!out.isOpen()) throw new ResponseStream.ClientGoneException();
            long now = System.nanoTime();
            if (now >= deadline) return false;
            if (now >= poll) return true;
            long slice = Math.min(TimeUnit.MILLISECONDS.toNanos(ALIVE_CHECK_MS), Math.min(deadline, poll) - now);
            try {
                watch.get(slice, TimeUnit.NANOSECONDS);
                return true;
            } catch (TimeoutException e) {
                // keep waiting
            } catch (ExecutionException | java.util.concurrent.CancellationException e) {
                sleep(slice); // a failed watch: rescan and re-arm, but not in a tight loop
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ResponseStream.ClientGoneException();
            }
        }
    }

    private static void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ResponseStream.ClientGoneException();
        }
    }
}
