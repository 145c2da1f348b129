package dev.chaise.http.handlers;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.handlers.ChangesArgs.Feed;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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
 *
 * <p>Rows are written with one Jackson generator per response straight into a buffer of bytes,
 * which goes to the stream a {@link #CHUNK} at a time (every row, for the live feeds that flush
 * each one): no tree or text per row, and few hand-offs to the event loop (issue 27).
 */
final class FeedWriter {
    /** A live feed rescans at least this often, in case a watch is lost. */
    static final long POLL_MS = 5_000;
    /** How soon a wait notices that the client has gone. */
    static final long ALIVE_CHECK_MS = 250;
    /** The bytes of rows gathered before they go out as one chunk. */
    static final int CHUNK = 64 * 1024;

    /** A row as it goes out: its JSON, and its id as an event of an eventsource feed (asked only there). */
    interface Row {
        void writeTo(JsonGenerator g) throws IOException;

        String eventId();
    }

    /**
     * Jackson's writer as the rest of Chaise renders JSON, with characters outside the BMP as
     * UTF-8, as Json.write gives them (its byte generator would otherwise escape each as two surrogates).
     */
    private static final ObjectWriter ROWS = Json.MAPPER.writer().with(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8);

    private final ResponseStream out;
    private final Feed feed;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(CHUNK + 8 * 1024);
    private final JsonGenerator gen;
    private long rows;

    FeedWriter(ResponseStream out, Feed feed) {
        this.out = out;
        this.feed = feed;
        try {
            gen = ROWS.createGenerator(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        gen.setRootValueSeparator(null); // rows are framed here, not by the generator
    }

    /** The opening, before any row. */
    void begin() {
        if (feed == Feed.NORMAL || feed == Feed.LONGPOLL) raw("{\"results\":[\n");
    }

    /** One row, framed for the feed; {@code id} is the event's id for eventsource. */
    void row(ObjectNode row, String id) {
        row(new Row() {
            @Override
            public void writeTo(JsonGenerator g) throws IOException {
                g.writeTree(row);
            }

            @Override
            public String eventId() {
                return id;
            }
        });
    }

    /** One row, framed for the feed. */
    void row(Row row) {
        try {
            switch (feed) {
                case NORMAL, LONGPOLL -> {
                    if (rows > 0) gen.writeRaw(",\r\n");
                    row.writeTo(gen);
                    if (bytes.size() >= CHUNK) push();
                }
                case CONTINUOUS -> {
                    row.writeTo(gen);
                    gen.writeRaw('\n');
                    send();
                }
                case EVENTSOURCE -> {
                    gen.writeRaw("data: ");
                    row.writeTo(gen);
                    gen.writeRaw("\nid: " + row.eventId() + "\n\n");
                    send();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the generator writes to memory
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
            case NORMAL, LONGPOLL -> raw("\n],\n" + members + "}\n");
            case CONTINUOUS -> raw("{" + members + "}\n");
            case EVENTSOURCE -> { }
        }
        push();
    }

    /** Text that is not a row, such as the framing or a heartbeat. */
    private void raw(String text) {
        try {
            gen.writeRaw(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What is written so far goes to the stream (which sends it when its buffer fills, or on a flush). */
    private void push() {
        try {
            gen.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (bytes.size() == 0) return;
        out.write(bytes.toByteArray());
        bytes.reset();
    }

    /** What is written so far reaches the client now. */
    private void send() {
        push();
        out.flush();
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
                send(); // what we have reaches the client before we wait
                if (!await(w, deadline)) {
                    if (heartbeat == null) return;
                    raw(feed == Feed.EVENTSOURCE ? "event: heartbeat\ndata: \n\n" : "\n");
                    send();
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
