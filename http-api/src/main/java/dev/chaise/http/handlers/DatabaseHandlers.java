package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Queries;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.SecurityObject;
import dev.chaise.storage.DbInfo;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Database-level endpoints: create, info, delete, {@code _security}, {@code _revs_limit}, {@code _compact}, {@code _ensure_full_commit}. */
public final class DatabaseHandlers {
    /** CouchDB 3's on-disk format number, reported for clients that look at it. */
    static final int DISK_FORMAT_VERSION = 8;

    private final Storage storage;
    private final Access access;
    private final dev.chaise.http.config.ConfigStore config;
    private final dev.chaise.stats.Histogram dbinfo;

    public DatabaseHandlers(Storage storage, Access access, dev.chaise.http.config.ConfigStore config) {
        this.storage = storage;
        this.access = access;
        this.config = config;
        this.dbinfo = dev.chaise.http.metrics.HttpdStats.of(access.stats()).dbinfo();
    }

    public void register(Router r) {
        r.add("PUT", "/{db}", this::create);
        r.add("GET", "/{db}", req -> {
            dev.chaise.storage.Database db = db(req, SecuredDb.Level.MEMBER).database();
            long start = System.nanoTime();
            var info = db.info();
            dbinfo.recordNanos(System.nanoTime() - start); // chttpd_db: the time of fabric:get_db_info
            return Response.json(200, info(info));
        });
        r.add("DELETE", "/{db}", this::delete);
        r.add("GET", "/{db}/_security", req -> Response.json(200, db(req, SecuredDb.Level.MEMBER).security().json()));
        r.add("PUT", "/{db}/_security", this::putSecurity);
        r.add("GET", "/{db}/_revs_limit", req -> Response.json(200, db(req, SecuredDb.Level.MEMBER).database().revsLimit()));
        r.add("PUT", "/{db}/_revs_limit", this::putRevsLimit);
        r.add("POST", "/{db}/_compact", req -> {
            var db = db(req, SecuredDb.Level.REQUIRE_DB_ADMIN).database(); // chttpd_auth_request first, then the handler's checks
            Bodies.requireContentType(req, Response.JSON);
            String name = db.name();
            // Old revisions' bodies go as they are superseded; what is left to reclaim is attachment
            // chunks no leaf names any more. Runs in the background, as CouchDB's compaction does.
            Thread.ofVirtual().name("compact-" + name).start(() -> {
                try {
                    db.sweepAttachments();
                } catch (RuntimeException e) {
                    org.slf4j.LoggerFactory.getLogger(DatabaseHandlers.class).warn("compacting {} failed", name, e);
                }
            });
            return Response.json(202, Response.OK);
        });
        r.add("POST", "/{db}/_ensure_full_commit", req -> {
            db(req, SecuredDb.Level.MEMBER);
            Bodies.requireContentType(req, Response.JSON);
            // Every acknowledged write is already durable.
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("ok", true);
            body.put("instance_start_time", "0");
            return Response.json(201, body);
        });
    }

    private SecuredDb db(Request req, SecuredDb.Level level) {
        return access.database(req, req.param("db"), level);
    }

    private Response create(Request req) {
        String name = req.param("db");
        Access.requireServerAdmin(req);
        if (Queries.bool(req, "partitioned", false)) throw HttpError.badRequest("Partitioned feature is not enabled.");
        storage.create(name);
        return Response.json(201, Response.OK).withHeader("Location", req.absoluteUri("/" + URLEncoder.encode(name, StandardCharsets.UTF_8)));
    }

    private Response delete(Request req) {
        // A script that meant to delete a document with an empty id, not the database.
        if (req.query("rev") != null) {
            throw HttpError.badRequest("You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?");
        }
        access.database(req, req.param("db"), SecuredDb.Level.SERVER_ADMIN);
        storage.delete(req.param("db"));
        return Response.ok();
    }

    private Response putSecurity(Request req) throws Exception {
        SecuredDb db = db(req, SecuredDb.Level.DB_ADMIN);
        // chttpd_db:validate_security_can_be_edited: [couchdb] users_db_security_editable, false by default.
        if (db.name().equals("_users") && !config.get("couchdb", "users_db_security_editable").map(v -> v.strip().equals("true")).orElse(false)) {
            throw HttpError.forbidden("You can't edit the security object of the user database.");
        }
        SecurityObject sec = SecurityObject.parse(Bodies.json(req));
        db.setSecurity(Json.write(sec.json()));
        return Response.ok();
    }

    private Response putRevsLimit(Request req) {
        SecuredDb db = db(req, SecuredDb.Level.DB_ADMIN);
        JsonNode n = Bodies.json(req);
        if (!n.canConvertToInt() || !n.isIntegralNumber() || n.asInt() < 1) {
            throw HttpError.badRequest("revs_limit must be a positive integer");
        }
        db.setRevsLimit(n.asInt());
        return Response.ok();
    }

    /** The {@code GET /{db}} object, in CouchDB's member order. */
    public static Map<String, Object> info(DbInfo i) {
        Map<String, Object> sizes = new LinkedHashMap<>();
        // There is no file: the KV bytes are both what is on disk and what is live.
        sizes.put("file", i.sizeActive());
        sizes.put("external", i.sizeExternal());
        sizes.put("active", i.sizeActive());
        Map<String, Object> cluster = new LinkedHashMap<>();
        cluster.put("q", 1);
        cluster.put("n", 1);
        cluster.put("w", 1);
        cluster.put("r", 1);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("instance_start_time", "0");
        m.put("db_name", i.name());
        m.put("purge_seq", i.purgeSeq() == null ? "0" : i.purgeSeq().toHex());
        m.put("update_seq", i.updateSeq() == null ? "0" : i.updateSeq().toHex());
        m.put("sizes", sizes);
        m.put("props", Map.of());
        m.put("doc_del_count", i.docDelCount());
        m.put("doc_count", i.docCount());
        m.put("disk_format_version", DISK_FORMAT_VERSION);
        m.put("compact_running", false);
        m.put("cluster", cluster);
        return m;
    }
}
