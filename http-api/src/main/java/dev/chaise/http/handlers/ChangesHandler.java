package dev.chaise.http.handlers;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.http.handlers.ChangesArgs.Feed;
import dev.chaise.http.handlers.ChangesArgs.Filter;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.AccessIndex;
import dev.chaise.storage.Change;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentJson.Meta;
import dev.chaise.storage.NoNextReason;
import dev.chaise.storage.RevId;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code GET/POST /{db}/_changes}: normal, longpoll, continuous and eventsource feeds over RFC D's
 * changes subspace, with the {@code _doc_ids}, {@code _selector} and {@code _design} filters.
 *
 * <p>Rows are read by a {@link Cursor} in short snapshot transactions and streamed as they come. {@code last_seq} is
 * the last change read, whether or not it passed the filter, so a filtered client resumes after
 * what was already examined, as with CouchDB. Live feeds wait on a watch of the database's write
 * counter (framing and waiting in {@link FeedWriter}).
 */
public final class ChangesHandler {
    /** Documents are read too: fewer rows per transaction. */
    static final int ROWS_PER_TRANSACTION_WITH_DOCS = 100;
    /** {@code pending} is counted exactly up to here; a larger backlog reports this many. */
    static final int PENDING_CAP = 10_000;
    /** {@code [couchdb] changes_doc_ids_optimization_threshold}: up to this many ids, CouchDB looks the documents up. */
    static final int DOC_IDS_LOOKUP_LIMIT = 1_000;
    /** CouchDB's default limit, which {@code seq_interval} counts down from. */
    private static final long COUCH_DEFAULT_LIMIT = 1_000_000_000_000_000L;

    private final Access access;
    private final java.util.concurrent.atomic.AtomicInteger openFeeds = new java.util.concurrent.atomic.AtomicInteger();

    private final dev.chaise.views.DocFilters filters;

    public ChangesHandler(dev.chaise.views.DocFilters filters, Access access) {
        this.filters = filters;
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
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        ChangesArgs a = ChangesArgs.parse(req);
        Filter filter = a.builtInFilter(req, body);
        if (filter == null) filter = designFilter(db, a.filterName(), req, body);
        Sequence since = switch (a.since()) {
            case "0" -> null;
            case "now" -> db.database().read(DbReader::updateSeq);
            default -> Sequence.parse(a.since());
        };
        Feed feed = a.feed();
        Run run = new Run(db, a, filter, since);
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
    private Filter designFilter(SecuredDb sdb, String name, Request req, ObjectNode body) {
        Database db = sdb.database();
        if (name.equals("_view")) {
            String view = req.query("view", "");
            if (view.isEmpty()) throw HttpError.badRequest("`view` filter parameter is not provided.");
            String[] parts = tokens(view);
            if (parts.length != 2) throw HttpError.badRequest("`view` must be of the form `designname/viewname`");
            requireMember(db, parts[0], "views", parts[1]);
            return js(() -> filters.viewFilter(db, DocumentJson.DESIGN_PREFIX + parts[0], parts[1]));
        }
        if (name.startsWith("_")) throw HttpError.badRequest("unknown builtin filter name");
        String[] parts = tokens(name);
        if (parts.length == 0) return new Filter.None();
        if (parts.length != 2) throw HttpError.badRequest("`filter` must be of the form `designname/filtername`");
        requireMember(db, parts[0], "filters", parts[1]);
        JsonNode jsReq = filterRequest(sdb, req, body);
        return js(() -> filters.filterFunction(db, DocumentJson.DESIGN_PREFIX + parts[0], parts[1], jsReq));
    }

    /** Opens the filter once here, so a missing engine or a compilation error is an error response, not a broken stream. */
    private static Filter js(java.util.function.Supplier<dev.chaise.views.DocFilters.DocFilter> open) {
        open.get().close();
        return new Filter.Js(open);
    }

    /** The {@code req} a filter function gets: CouchDB's request object, with the POSTed body as its text. */
    private static JsonNode filterRequest(SecuredDb db, Request req, ObjectNode body) {
        return JsonReqObject.of(req, db, null, java.util.UUID.randomUUID().toString().replace("-", ""), body == null ? null : body.toString());
    }

    private static String[] tokens(String s) {
        return java.util.Arrays.stream(s.split("/")).filter(t -> !t.isEmpty()).toArray(String[]::new);
    }

    private static void requireMember(Database db, String ddoc, String member, String name) {
        JsonNode body = db.get(DocumentJson.DESIGN_PREFIX + ddoc, null, false).body();
        JsonNode group = body.get(member);
        if (group == null) throw HttpError.notFound("missing json key: " + member);
        if (!group.isObject()) throw HttpError.notFound("json_mismatch");
        if (group.get(name) == null) throw HttpError.notFound("missing json key: " + name);
    }

    // ---------------------------------------------------------------- one response

    /**
     * A change that passed the filter, as its row's members in CouchDB's order; rendered only as it
     * is sent. {@code doc} is null without {@code include_docs} (a {@code NullNode} for a document
     * the user may not see); {@code showSeq} false sends {@code "seq":null} ({@code seq_interval}).
     */
    private record Row(Sequence seq, String id, List<RevId> revs, boolean deleted, JsonNode doc, boolean showSeq) implements FeedWriter.Row {
        Row(Sequence seq, String id, List<RevId> revs, boolean deleted, JsonNode doc) {
            this(seq, id, revs, deleted, doc, true);
        }

        Row withoutSeq() {
            return new Row(seq, id, revs, deleted, doc, false);
        }

        @Override
        public void writeTo(JsonGenerator g) throws IOException {
            g.writeStartObject();
            if (showSeq) g.writeStringField("seq", seq.toHex());
            else g.writeNullField("seq");
            g.writeStringField("id", id);
            g.writeArrayFieldStart("changes");
            for (RevId rev : revs) {
                g.writeStartObject();
                g.writeStringField("rev", rev.toString());
                g.writeEndObject();
            }
            g.writeEndArray();
            if (deleted) g.writeBooleanField("deleted", true);
            if (doc != null) {
                g.writeFieldName("doc");
                g.writeTree(doc);
            }
            g.writeEndObject();
        }

        /** The seq as JSON, as CouchDB names an event. */
        @Override
        public String eventId() {
            return showSeq ? "\"" + seq.toHex() + "\"" : "null";
        }
    }

    /** The state of one response: where the scan is, what was sent, and how to write it. */
    private final class Run {
        final SecuredDb secured;
        final Database db;
        final ChangesArgs a;
        final Filter filter;
        final Sequence since;
        final Feed feed;
        /** The last change examined: where the next scan resumes, and the response's last_seq. */
        Sequence last;
        boolean scanned;
        boolean limitReached;

        /**
         * {@code pending} for a filter CouchDB answers by lookup rather than by a scan of the feed
         * ({@code _doc_ids} with at most {@link #DOC_IDS_LOOKUP_LIMIT} ids, {@code _design}): the
         * changes after where the last scan began, less the rows it sent; null for the others.
         */
        Long lookupPending;

        /** Mango or JavaScript: a test on each change's document; null for the other filters. */
        java.util.function.Predicate<ObjectNode> docTest;

        Run(SecuredDb secured, ChangesArgs a, Filter filter, Sequence since) {
            this.secured = secured;
            this.db = secured.database();
            this.a = a;
            this.filter = filter;
            this.since = since;
            this.feed = a.descending() && a.feed() != Feed.EVENTSOURCE && a.feed() != Feed.CONTINUOUS ? Feed.NORMAL : a.feed();
            this.last = since;
        }

        void writeTo(ResponseStream out) {
            openFeeds.incrementAndGet();
            dev.chaise.views.DocFilters.DocFilter js = null;
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
            FeedWriter w = new FeedWriter(out, feed);
            w.begin();
            try {
                if (a.limit() == 0) limitReached = true;
                else if (feed == Feed.NORMAL || a.descending()) scan(w);
                else w.live(db::watchWrites, () -> scan(w), () -> limitReached, a.heartbeat(), a.timeout());
            } catch (StorageException e) {
                // The database went away under a running feed: end it as CouchDB ends a dead feed.
                if (e.kind() != StorageException.Kind.NOT_FOUND || !scanned) throw e;
            }
            long pending = lookupPending != null ? lookupPending : limitReached ? pending() : 0;
            w.end("\"last_seq\":" + (last == null ? "\"0\"" : "\"" + last.toHex() + "\"") + ",\"pending\":" + pending);
        }

        /** Reads to the end of the feed or the limit; the number of rows sent. */
        long scan(FeedWriter w) {
            if (limitReached) return 0;
            if (secured.limitedByAccess()) return scanAccess(w);
            long before = w.rows();
            // couch_changes' send_lookup_changes counts every change after the start as pending
            // and takes one off per row it sends; the documents it never looks at stay counted.
            long base = byLookup() ? (a.descending() ? db.countChanges(null, null, PENDING_CAP) : db.countChanges(last, null, PENDING_CAP)) : 0;
            int rows = a.includeDocs() || docTest != null ? ROWS_PER_TRANSACTION_WITH_DOCS : ScanProperties.ROWS_PER_TRANSACTION;
            ScanProperties props = ScanProperties.of(a.descending(), a.limit() == Long.MAX_VALUE ? 0 : a.limit() - w.rows()).rowsPerTransaction(rows);
            Cursor<Row> c = db.changes(a.descending() ? null : last, props, this::map);
            Long every = a.seqInterval();
            while (c.hasNext()) {
                Row row = c.next();
                last = row.seq();
                // seq_interval: CouchDB computes seq only where the remaining limit is a multiple of it.
                long remaining = (a.limit() == Long.MAX_VALUE ? COUCH_DEFAULT_LIMIT : a.limit()) - w.rows();
                w.row(every != null && remaining % every != 0 ? row.withoutSeq() : row);
            }
            scanned = true;
            if (c.continuation() != null) last = Sequence.fromContinuation(c.continuation()); // past rows the filter dropped
            if (c.noNextReason() == NoNextReason.RETURN_LIMIT_REACHED) limitReached = true;
            if (byLookup()) lookupPending = Math.max(0, base - (w.rows() - before));
            return w.rows() - before;
        }

        /**
         * A user's feed in an access database: their rows alone, from the database's listings by
         * principal ({@link SecuredDb#accessibleChanges}) merged as they are read, each document
         * once, rows mapped {@link #ROWS_PER_TRANSACTION_WITH_DOCS} to a transaction; {@code pending}
         * is their own rows left, counted up to {@link #PENDING_CAP} as for everyone. A document
         * they lost comes as a deletion a replica applies ({@link AccessIndex#revokedRev}), whatever the filter.
         */
        long scanAccess(FeedWriter w) {
            long before = w.rows();
            // Unfiltered, every change is a row: the merge need read no more than the limit.
            long max = a.limit() == Long.MAX_VALUE || !(filter instanceof Filter.None) ? 0 : a.limit() - w.rows();
            java.util.Iterator<AccessIndex.AccessChange> mine = secured.accessibleChanges(a.descending() ? null : last,
                    ScanProperties.of(a.descending(), max));
            while (mine.hasNext() && !limitReached) {
                List<AccessIndex.AccessChange> chunk = new ArrayList<>(ROWS_PER_TRANSACTION_WITH_DOCS);
                while (chunk.size() < ROWS_PER_TRANSACTION_WITH_DOCS && mine.hasNext()) chunk.add(mine.next());
                List<Row> rows = db.read(r -> {
                    List<Row> out = new ArrayList<>(chunk.size());
                    for (AccessIndex.AccessChange ch : chunk) {
                        out.add(ch.revoked() ? revokedRow(ch) : map(r, new Change(ch.seq(), ch.id(), ch.rev(), 1, ch.deleted())));
                    }
                    return out;
                });
                for (int k = 0; k < chunk.size() && !limitReached; k++) {
                    last = chunk.get(k).seq();
                    Row row = rows.get(k);
                    if (row == null) continue;
                    w.row(row);
                    if (a.limit() != Long.MAX_VALUE && w.rows() >= a.limit()) limitReached = true;
                }
            }
            scanned = true;
            lookupPending = limitReached ? ownPending() : 0; // the user's own rows left, never the database's
            return w.rows() - before;
        }

        /** This user's rows after {@code last} (descending: before it), up to {@link #PENDING_CAP}. */
        long ownPending() {
            if (a.descending() && last == null) return 0;
            java.util.Iterator<AccessIndex.AccessChange> left = secured.accessibleChanges(a.descending() ? null : last,
                    ScanProperties.of(a.descending(), a.descending() ? 0 : PENDING_CAP));
            long n = 0;
            while (left.hasNext() && n < PENDING_CAP) {
                AccessIndex.AccessChange ch = left.next();
                if (!a.descending() || ch.seq().compareTo(last) < 0) n++;
            }
            return n;
        }

        /** The row of a document the user lost: a deletion one step past the revision they had. */
        Row revokedRow(AccessIndex.AccessChange ch) {
            if (filter instanceof Filter.DocIds d && !d.ids().contains(ch.id())) return null;
            ObjectNode doc = a.includeDocs() ? Json.NODES.objectNode().put("_id", ch.id()).put("_rev", ch.feedRev().toString()).put("_deleted", true) : null;
            return new Row(ch.seq(), ch.id(), List.of(ch.feedRev()), true, doc);
        }

        /** Whether CouchDB serves this feed by looking documents up ({@code couch_changes:can_optimize}). */
        boolean byLookup() {
            return filter instanceof Filter.Design || filter instanceof Filter.DocIds d && d.ids().size() <= DOC_IDS_LOOKUP_LIMIT;
        }

        /** The row for a change, or null if the filter drops it. */
        Row map(DbReader r, Change ch) {
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
            List<RevId> revs;
            StoredDoc winner = null;
            if (docTest != null) {
                winner = r.get(id, ch.rev(), false);
                if (a.allDocsStyle() && ch.branchCount() > 1) {
                    revs = new ArrayList<>();
                    for (RevId leafRev : r.leaves(id)) {
                        StoredDoc leaf = leafRev.equals(winner.rev()) ? winner : r.get(id, leafRev, false);
                        if (docTest.test(DocumentJson.render(leaf))) revs.add(leafRev);
                    }
                } else {
                    revs = docTest.test(DocumentJson.render(winner)) ? List.of(ch.rev()) : List.of();
                }
                if (revs.isEmpty()) return null;
            } else if (a.allDocsStyle() && ch.branchCount() > 1) { // RFC D: read branches only when there are several
                revs = r.leaves(id);
            } else {
                revs = List.of(ch.rev());
            }
            JsonNode doc = null;
            if (a.includeDocs()) {
                StoredDoc d = a.conflicts() ? r.get(id, ch.rev(), true) : winner != null ? winner : r.get(id, ch.rev(), false);
                ObjectNode visible = secured.renderOrNull(d, new Meta(false, false, a.conflicts(), false, false));
                if (visible != null) {
                    r.inlineAttachments(d, visible, a.attachments() ? 0 : -1);
                    if (a.attEncodingInfo()) DocumentJson.showEncoding(d, visible);
                }
                doc = visible == null ? Json.NODES.nullNode() : visible;
            }
            return new Row(ch.seq(), id, revs, ch.deleted(), doc);
        }

        /** Changes after {@code last} (before it, descending), counted up to {@link #PENDING_CAP}. */
        long pending() {
            if (!a.descending()) return db.countChanges(last, null, PENDING_CAP);
            if (last == null) return 0;
            return Math.min(db.countChanges(null, last, PENDING_CAP + 1) - 1, PENDING_CAP); // less last itself
        }
    }
}
