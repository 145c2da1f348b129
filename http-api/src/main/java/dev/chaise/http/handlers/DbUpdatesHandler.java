package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.handlers.ChangesArgs.Feed;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.DbUpdate;
import dev.chaise.storage.NoNextReason;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import java.util.List;

/**
 * {@code GET /_db_updates}: databases created, updated and deleted, in commit order (storage's
 * versionstamped feed), for server admins, with CouchDB's feeds, {@code since}, {@code limit},
 * {@code descending}, {@code heartbeat} and {@code timeout}. Each database appears once, at its
 * latest event.
 */
public final class DbUpdatesHandler {
    private final Storage storage;

    public DbUpdatesHandler(Storage storage) {
        this.storage = storage;
    }

    public void register(Router r) {
        r.add("GET", "/_db_updates", this::updates);
    }

    /** CouchDB's parameters for this feed (global_changes_httpd): unknown ones are ignored. */
    private record Args(Feed feed, String since, boolean descending, long limit, Long heartbeat, long timeout) {}

    private static Args parse(Request req) {
        Feed feed = switch (req.query("feed", "normal")) {
            case "normal" -> Feed.NORMAL;
            case "longpoll" -> Feed.LONGPOLL;
            case "continuous" -> Feed.CONTINUOUS;
            case "eventsource" -> Feed.EVENTSOURCE;
            default -> throw HttpError.badRequest("Supported `feed` types: normal, continuous, longpoll, eventsource");
        };
        String since = DocSupport.unquote(req.query("since", "0").strip());
        if (feed == Feed.EVENTSOURCE && req.header("Last-Event-ID") != null) since = DocSupport.unquote(req.header("Last-Event-ID").strip());
        long limit = req.query("limit") == null ? Long.MAX_VALUE : nonNegative(req.query("limit"));
        Long heartbeat = switch (req.query("heartbeat", "false")) {
            case "false" -> null;
            case "true" -> ChangesArgs.DEFAULT_TIMEOUT_MS;
            default -> Math.max(1, Math.min(nonNegative(req.query("heartbeat")), ChangesArgs.DEFAULT_TIMEOUT_MS));
        };
        long timeout = req.query("timeout") == null ? ChangesArgs.DEFAULT_TIMEOUT_MS
                : Math.min(nonNegative(req.query("timeout")), ChangesArgs.DEFAULT_TIMEOUT_MS);
        return new Args(feed, since, "true".equals(req.query("descending")), limit, heartbeat, timeout);
    }

    private static long nonNegative(String v) {
        try {
            long n = Long.parseLong(v);
            if (n >= 0) return n;
        } catch (NumberFormatException e) {
            // below
        }
        throw HttpError.badRequest("invalid_integer");
    }

    private Response updates(Request req) {
        Access.requireServerAdmin(req);
        Args a = parse(req);
        // "now" starts at the newest event; a feed read backwards ignores since, as _changes does.
        String since = a.descending() || a.since().equals("0") ? null : a.since().equals("now") ? storage.dbUpdatesNow() : a.since();
        if (since != null) storage.dbUpdates(since, ScanProperties.of(false, 1)); // a malformed since is a 400, before the stream starts
        Feed feed = a.descending() && a.feed() == Feed.LONGPOLL ? Feed.NORMAL : a.feed();
        Response.StreamBody body = out -> new Run(a, feed, since).writeTo(new FeedWriter(out, feed));
        if (feed == Feed.EVENTSOURCE) {
            return new Response.Streamed(200, List.of(new Response.Header("Content-Type", "text/event-stream"),
                    new Response.Header("Cache-Control", "no-cache")), body);
        }
        return Response.jsonStream(200, body);
    }

    /** One response: where the feed is, and what was sent. */
    private final class Run {
        final Args a;
        final Feed feed;
        String last;
        boolean limitReached;

        Run(Args a, Feed feed, String since) {
            this.a = a;
            this.feed = feed;
            this.last = since;
        }

        void writeTo(FeedWriter w) {
            w.begin();
            if (a.limit() == 0) limitReached = true;
            else if (feed == Feed.NORMAL || a.descending()) scan(w);
            else w.live(storage::watchDbUpdates, () -> scan(w), () -> limitReached, a.heartbeat(), a.timeout());
            w.end("\"last_seq\":\"" + (last == null ? "0" : last) + "\"");
        }

        long scan(FeedWriter w) {
            if (limitReached) return 0;
            long before = w.rows();
            long remaining = a.limit() == Long.MAX_VALUE ? 0 : a.limit() - w.rows();
            Cursor<DbUpdate> c = storage.dbUpdates(a.descending() ? null : last, ScanProperties.of(a.descending(), remaining));
            while (c.hasNext()) {
                DbUpdate u = c.next();
                last = u.seq();
                ObjectNode row = Json.NODES.objectNode().put("db_name", u.dbName()).put("type", u.type()).put("seq", u.seq());
                w.row(row, "\"" + u.seq() + "\"");
            }
            if (c.noNextReason() == NoNextReason.RETURN_LIMIT_REACHED) limitReached = true;
            return w.rows() - before;
        }
    }
}
