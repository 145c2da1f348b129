package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.http.auth.Access;
import dev.chaise.http.handlers.ChangesArgs.Feed;
import dev.chaise.http.handlers.ChangesArgs.Filter;
import dev.chaise.http.handlers.DocSupport.Meta;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.storage.ChangesSubspace;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.DocumentStore.StoredDoc;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.EditBranches;
import dev.chaise.storage.rev.RevId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code GET/POST /{db}/_changes}: normal, longpoll, continuous and eventsource feeds over RFC D's
 * changes subspace, with the {@code _doc_ids}, {@code _selector} and {@code _design} filters.
 *
 * <p>Rows are read in short snapshot transactions and streamed as they come. {@code last_seq} is
 * the last change read, whether or not it passed the filter, so a filtered client resumes after
 * what was already examined, as with CouchDB. Live feeds wait on a watch of the database's write
 * counter, rescanning at least every {@link #POLL_MS} in case a watch is lost, and notice a
 * departed client within {@link #ALIVE_CHECK_MS}.
 */
public final class ChangesHandler {
    static final int ROWS_PER_TRANSACTION = 1_000;
    static final int ROWS_PER_TRANSACTION_WITH_DOCS = 100;
    static final long MILLIS_PER_TRANSACTION = 2_000;
    /** {@code pending} is counted exactly up to here; a larger backlog reports this many. */
    static final int PENDING_CAP = 10_000;
    static final long POLL_MS = 5_000;
    static final long ALIVE_CHECK_MS = 250;
    /** CouchDB's default limit, which {@code seq_interval} counts down from. */
    private static final long COUCH_DEFAULT_LIMIT = 1_000_000_000_000_000L;

    private final DocumentStore docs;
    private final Access access;
    private final java.util.concurrent.atomic.AtomicInteger openFeeds = new java.util.concurrent.atomic.AtomicInteger();

    private final dev.chaise.views.ViewService views;

    public ChangesHandler(DocumentStore docs, dev.chaise.views.ViewService views, Access access) {
        this.docs = docs;
        this.views = views;
        this.access = access;
    }

    public void register(Router r) {
        r.add("GET", "/{db}/_changes", req -> changes(req, null));
        r.add("POST", "/{db}/_changes", req -> {
            Bodies.requireContentType(req, Response.JSON);
            return changes(req, req.body().length == 0 ? null : Bodies.jsonObject(req));
        });
    }

    /** Responses being streamed right now: a departed client's feed must not stay among them. */
    public int openFeeds() {
        return openFeeds.get();
    }

    private Response changes(Request req, ObjectNode body) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        ChangesArgs a = ChangesArgs.parse(req);
        Filter filter = a.builtInFilter(req, body);
        if (filter == null) filter = designFilter(db.name(), a.filterName(), req, body);
        Sequence since = switch (a.since()) {
            case "0" -> null;
            case "now" -> docs.info(db.name()).updateSeq();
            default -> Sequence.parse(a.since());
        };
        Feed feed = a.feed();
        Run run = new Run(db.name(), db.handle().id(), a, filter, since);
        Response.StreamBody body1 = out -> run.writeTo(out);
        if (feed == Feed.EVENTSOURCE) {
            return new Response.Streamed(200, List.of(new Response.Header("Content-Type", "text/event-stream"),
                    new Response.Header("Cache-Control", "no-cache")), body1);
        }
        return Response.jsonStream(200, body1);
    }

    /**
     * {@code filter=ddoc/name} and {@code filter=_view}: CouchDB's checks (the design document
     * and the named function must exist), then a JavaScript test that the streaming thread opens.
     */
    private Filter designFilter(String db, String name, Request req, ObjectNode body) {
        if (name.equals("_view")) {
            String view = req.query("view", "");
            if (view.isEmpty()) throw HttpError.badRequest("`view` filter parameter is not provided.");
            String[] parts = tokens(view);
            if (parts.length != 2) throw HttpError.badRequest("`view` must be of the form `designname/viewname`");
            requireMember(db, parts[0], "views", parts[1]);
            return js(() -> views.viewFilter(db, DocumentJson.DESIGN_PREFIX + parts[0], parts[1]));
        }
        if (name.startsWith("_")) throw HttpError.badRequest("unknown builtin filter name");
        String[] parts = tokens(name);
        if (parts.length == 0) return new Filter.None();
        if (parts.length != 2) throw HttpError.badRequest("`filter` must be of the form `designname/filtername`");
        requireMember(db, parts[0], "filters", parts[1]);
        JsonNode jsReq = filterRequest(db, req, body);
        return js(() -> views.filterFunction(db, DocumentJson.DESIGN_PREFIX + parts[0], parts[1], jsReq));
    }

    /** Opens the filter once here, so a missing engine or a compilation error is an error response, not a broken stream. */
    private static Filter js(java.util.function.Supplier<dev.chaise.views.ViewService.DocFilter> open) {
        open.get().close();
        return new Filter.Js(open);
    }

    /** The {@code req} a filter function gets, as CouchDB builds it (the parts filters use). */
    private static JsonNode filterRequest(String db, Request req, ObjectNode body) {
        ObjectNode r = Json.NODES.objectNode();
        r.putObject("info").put("db_name", db);
        r.putNull("id");
        r.put("method", req.method());
        ArrayNode path = r.putArray("path");
        req.path().forEach(path::add);
        r.put("raw_path", req.rawUri());
        ObjectNode query = r.putObject("query");
        req.query().forEach((k, v) -> {
            if (!v.isEmpty()) query.put(k, v.getLast());
        });
        ObjectNode headers = r.putObject("headers");
        req.headers().forEach(h -> {
            if (!h.getKey().equalsIgnoreCase("authorization") && !h.getKey().equalsIgnoreCase("cookie")) headers.put(h.getKey(), h.getValue());
        });
        if (body != null) r.put("body", body.toString());
        else r.put("body", "undefined");
        r.put("peer", req.remoteAddress());
        ObjectNode user = r.putObject("userCtx");
        user.put("db", db);
        if (req.user() != null && req.user().name() != null) user.put("name", req.user().name());
        else user.putNull("name");
        ArrayNode roles = user.putArray("roles");
        if (req.user() != null) req.user().roles().forEach(roles::add);
        return r;
    }

    private static String[] tokens(String s) {
        return java.util.Arrays.stream(s.split("/")).filter(t -> !t.isEmpty()).toArray(String[]::new);
    }

    private void requireMember(String db, String ddoc, String member, String name) {
        JsonNode body = docs.get(db, DocumentJson.DESIGN_PREFIX + ddoc, null, false).body();
        JsonNode group = body.get(member);
        if (group == null) throw HttpError.notFound("missing json key: " + member);
        if (!group.isObject()) throw HttpError.notFound("json_mismatch");
        if (group.get(name) == null) throw HttpError.notFound("missing json key: " + name);
    }

    // ---------------------------------------------------------------- one response

    /** A row read from the feed; {@code row} is null when the change did not pass the filter. */
    private record Scanned(Sequence seq, byte[] key, ObjectNode row) {}

    /** The state of one response: where the scan is, what was sent, and how to write it. */
    private final class Run {
        final String db;
        final long dbId;
        final ChangesArgs a;
        final Filter filter;
        final Sequence since;
        final Feed feed;
        // forward: the next key to read; descending: the key below which to read next
        byte[] begin;
        byte[] end;
        Sequence last;
        long emitted;
        boolean limitReached;

        /** Mango or JavaScript: a test on each change's document; null for the other filters. */
        java.util.function.Predicate<ObjectNode> docTest;

        Run(String db, long dbId, ChangesArgs a, Filter filter, Sequence since) {
            this.db = db;
            this.dbId = dbId;
            this.a = a;
            this.filter = filter;
            this.since = since;
            this.feed = a.descending() && a.feed() != Feed.EVENTSOURCE && a.feed() != Feed.CONTINUOUS ? Feed.NORMAL : a.feed();
            this.last = since;
        }

        void writeTo(ResponseStream out) {
            openFeeds.incrementAndGet();
            dev.chaise.views.ViewService.DocFilter js = null;
            try {
                if (filter instanceof Filter.Mango m) docTest = m.selector()::matches;
                if (filter instanceof Filter.Js j) {
                    js = j.open().get(); // engine contexts are confined to the thread that uses them
                    docTest = js::test;
                }
                stream(out);
            } finally {
                if (js != null) js.close();
                openFeeds.decrementAndGet();
            }
        }

        void stream(ResponseStream out) {
            if (feed == Feed.NORMAL || feed == Feed.LONGPOLL) out.write("{\"results\":[\n");
            try {
                if (a.limit() == 0) limitReached = true;
                else if (feed == Feed.NORMAL || a.descending()) scan(out);
                else live(out);
            } catch (StorageException e) {
                // The database went away under a running feed: end it as CouchDB ends a dead feed.
                if (e.kind() != StorageException.Kind.NOT_FOUND || begin == null) throw e;
            }
            long pending = limitReached ? pending() : 0;
            String lastSeq = last == null ? "\"0\"" : "\"" + last.toHex() + "\"";
            switch (feed) {
                case NORMAL, LONGPOLL -> out.write("\n],\n\"last_seq\":" + lastSeq + ",\"pending\":" + pending + "}\n");
                case CONTINUOUS -> out.write("{\"last_seq\":" + lastSeq + ",\"pending\":" + pending + "}\n");
                case EVENTSOURCE -> { }
            }
        }

        /** Reads to the end of the feed or the limit; the number of rows sent. */
        long scan(ResponseStream out) {
            long before = emitted;
            while (!limitReached) {
                List<Scanned> batch = readBatch(a.limit() - emitted);
                if (batch == null) break; // the end of the feed, for now
                for (Scanned s : batch) {
                    last = s.seq();
                    if (s.row() != null) emit(out, s);
                }
                if (emitted >= a.limit()) limitReached = true;
            }
            return emitted - before;
        }

        void live(ResponseStream out) {
            long waitMs = a.heartbeat() != null ? a.heartbeat() : a.timeout();
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
            while (true) {
                CompletableFuture<Void> watch = docs.watchWrites(db); // armed before the scan, so no write falls in between
                try {
                    long sent = scan(out);
                    if (limitReached || (feed == Feed.LONGPOLL && emitted > 0)) return;
                    if (sent > 0) deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
                    out.flush(); // what we have reaches the client before we wait
                    if (!await(watch, deadline, out)) {
                        if (a.heartbeat() == null) return;
                        out.write(feed == Feed.EVENTSOURCE ? "event: heartbeat\ndata: \n\n" : "\n");
                        out.flush();
                        deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
                    }
                } finally {
                    watch.cancel(false);
                }
            }
        }

        void emit(ResponseStream out, Scanned s) {
            ObjectNode row = s.row();
            Long every = a.seqInterval();
            long remaining = (a.limit() == Long.MAX_VALUE ? COUCH_DEFAULT_LIMIT : a.limit()) - emitted;
            // seq_interval: CouchDB computes seq only where the remaining limit is a multiple of it.
            if (every != null && remaining % every != 0) row.putNull("seq");
            String json;
            try {
                json = Json.MAPPER.writeValueAsString(row);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            switch (feed) {
                case NORMAL, LONGPOLL -> out.write(emitted == 0 ? json : ",\r\n" + json);
                case CONTINUOUS -> {
                    out.write(json + "\n");
                    out.flush();
                }
                case EVENTSOURCE -> {
                    out.write("data: " + json + "\nid: " + row.get("seq") + "\n\n");
                    out.flush();
                }
            }
            emitted++;
        }

        /**
         * One transaction's worth of changes, stopping after {@code want} rows pass; null once the
         * range is exhausted and nothing was read.
         */
        List<Scanned> readBatch(long want) {
            int rows = a.includeDocs() || docTest != null ? ROWS_PER_TRANSACTION_WITH_DOCS : ROWS_PER_TRANSACTION;
            List<Scanned> batch = docs.kv().run(tx -> {
                ReadTransaction snap = tx.snapshot();
                DbHandle h = open(tx);
                if (begin == null) {
                    byte[][] range = ChangesSubspace.range(h);
                    begin = a.descending() || since == null ? range[0] : ChangesSubspace.after(h, since);
                    end = range[1];
                }
                List<Scanned> out = new ArrayList<>();
                long deadline = System.currentTimeMillis() + MILLIS_PER_TRANSACTION;
                long passed = 0;
                try (RangeIterator it = snap.getRange(begin, end, rows, a.descending())) {
                    while (it.hasNext()) {
                        KeyValue kv = it.next();
                        ChangesSubspace.Change ch = ChangesSubspace.decode(h, kv);
                        ObjectNode row = map(snap, h, ch);
                        out.add(new Scanned(ch.seq(), kv.key(), row));
                        if (row != null && ++passed >= want) break;
                        if (System.currentTimeMillis() > deadline) break;
                    }
                }
                return out;
            });
            if (batch.isEmpty()) return null;
            byte[] lastKey = batch.getLast().key();
            if (a.descending()) end = lastKey;
            else begin = Keys.keyAfter(lastKey);
            return batch;
        }

        DbHandle open(ReadTransaction tx) {
            DbHandle h = docs.databases().open(tx, db);
            if (h.id() != dbId) throw StorageException.notFound("Database does not exist."); // deleted and re-created
            return h;
        }

        /** The row for a change, or null if the filter drops it. */
        ObjectNode map(ReadTransaction tx, DbHandle h, ChangesSubspace.Change ch) {
            String id = ch.id();
            switch (filter) {
                case Filter.DocIds d when !d.ids().contains(id) -> {
                    return null;
                }
                case Filter.Design d when !id.startsWith("_design") -> {
                    return null;
                }
                default -> { }
            }
            List<EditBranch> branches = null;
            List<RevId> revs;
            StoredDoc winner = null;
            if (docTest != null) {
                winner = DocumentStore.get(tx, h, id, ch.rev(), false);
                if (a.allDocsStyle() && ch.branchCount() > 1) {
                    branches = DocumentStore.branches(tx, h, id);
                    revs = new ArrayList<>();
                    for (EditBranch b : EditBranches.leaves(branches)) {
                        StoredDoc leaf = b.leaf().equals(winner.rev()) ? winner : DocumentStore.get(tx, h, id, b.leaf(), false);
                        if (docTest.test(DocumentJson.render(leaf))) revs.add(b.leaf());
                    }
                } else {
                    revs = docTest.test(DocumentJson.render(winner)) ? List.of(ch.rev()) : List.of();
                }
                if (revs.isEmpty()) return null;
            } else if (a.allDocsStyle() && ch.branchCount() > 1) { // RFC D: read branches only when there are several
                branches = DocumentStore.branches(tx, h, id);
                revs = EditBranches.leaves(branches).stream().map(EditBranch::leaf).toList();
            } else {
                revs = List.of(ch.rev());
            }
            ObjectNode row = Json.NODES.objectNode().put("seq", ch.seq().toHex()).put("id", id);
            ArrayNode changes = row.putArray("changes");
            for (RevId r : revs) changes.addObject().put("rev", r.toString());
            if (ch.deleted()) row.put("deleted", true);
            if (a.includeDocs()) {
                StoredDoc d = winner;
                if (d == null || a.conflicts()) {
                    if (a.conflicts() && branches == null) branches = DocumentStore.branches(tx, h, id);
                    if (d == null) d = DocumentStore.get(tx, h, id, ch.rev(), false);
                    d = new StoredDoc(d.id(), d.rev(), d.deleted(), d.body(), branches, d.seq());
                }
                ObjectNode doc = DocSupport.render(d, new Meta(false, false, a.conflicts(), false, false));
                DocSupport.inlineAttachments(tx, h, id, doc, a.attachments() ? 0 : -1);
                row.set("doc", doc);
            }
            return row;
        }

        /**
         * Waits for a write, the poll interval, or {@code deadline}; false on the deadline. Returns
         * early (true) every {@link #POLL_MS} so a lost watch only delays a change.
         */
        boolean await(CompletableFuture<Void> watch, long deadline, ResponseStream out) {
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

        /** Changes after {@code last} (before it, descending), counted up to {@link #PENDING_CAP}. */
        long pending() {
            return docs.kv().run(tx -> {
                DbHandle h = open(tx);
                byte[][] range = ChangesSubspace.range(h);
                byte[] lo;
                byte[] hi;
                if (a.descending()) {
                    if (last == null) return 0L;
                    lo = range[0];
                    hi = ChangesSubspace.after(h, last); // includes last itself, subtracted below
                } else {
                    lo = last == null ? range[0] : ChangesSubspace.after(h, last);
                    hi = range[1];
                }
                long n = 0;
                try (RangeIterator it = tx.snapshot().getRange(lo, hi, PENDING_CAP + 1, false)) {
                    while (it.hasNext() && n <= PENDING_CAP) {
                        it.next();
                        n++;
                    }
                }
                if (a.descending()) n--;
                return Math.min(n, PENDING_CAP);
            });
        }
    }
}
