package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DesignFunctions;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.js.RenderProgram;
import dev.chaise.views.query.ViewQuery;
import dev.chaise.views.query.ViewRow;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * CouchDB's design-document functions over HTTP ({@code chttpd_show}, {@code chttpd_rewrite}):
 * {@code _update} ({@code /{db}/_design/{ddoc}/_update/{name}[/{docid}]}), {@code _show}
 * ({@code .../_show/{name}[/{docid}]}), {@code _list} and {@code _rewrite}. Each opens the database for a member first, reads the
 * document the function is given through the door (as the user may see it, with
 * {@code _conflicts}), runs the function ({@link DesignFunctions}), writes what an update returns
 * through the door (so validate_doc_update and every rule apply) and answers with the response
 * object the function built, as {@code chttpd_external:send_external_response} renders it.
 */
public final class DesignFunctionHandlers {
    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE");

    /** How deep this thread is in rewrites of one request ({@code [chttpd] rewrite_limit}). */
    private static final ThreadLocal<int[]> REWRITES = ThreadLocal.withInitial(() -> new int[1]);

    private final DesignFunctions functions;
    private final ViewQueries views;
    private final Access access;
    private final ConfigStore config;
    private Router router;

    private final Uuids uuids;

    public DesignFunctionHandlers(DesignFunctions functions, ViewQueries views, Access access, ConfigStore config) {
        this.uuids = new Uuids(config);
        this.functions = functions;
        this.views = views;
        this.access = access;
        this.config = config;
    }

    public void register(Router r) {
        this.router = r; // a rewrite dispatches its new request through the same routes
        for (String m : METHODS) {
            r.add(m, "/{db}/_design/{ddoc}/_rewrite", this::rewrite);
            r.add(m, "/{db}/_design/{ddoc}/_rewrite/{rest...}", this::rewrite);
        }
        // CouchDB runs these for any method; the update function itself refuses GET.
        for (String m : METHODS) {
            r.add(m, "/{db}/_design/{ddoc}/_update", req -> invalidPath(req, "update_error"));
            r.add(m, "/{db}/_design/{ddoc}/_update/{rest...}", this::update);
            r.add(m, "/{db}/_design/{ddoc}/_show", req -> invalidPath(req, "show_error"));
            r.add(m, "/{db}/_design/{ddoc}/_show/{rest...}", this::show);
            r.add(m, "/{db}/_design/{ddoc}/_list", req -> invalidPath(req, "list_error"));
        }
        // chttpd_show:handle_view_list_req runs a list for OPTIONS as for GET.
        for (String m : List.of("GET", "OPTIONS")) r.add(m, "/{db}/_design/{ddoc}/_list/{rest...}", req -> list(req, null));
        r.add("POST", "/{db}/_design/{ddoc}/_list/{rest...}", req -> {
            member(req);
            Bodies.requireContentType(req, Response.JSON);
            return list(req, Bodies.jsonObject(req));
        });
        for (String m : List.of("PUT", "DELETE")) {
            r.add(m, "/{db}/_design/{ddoc}/_list/{rest...}", req -> {
                member(req);
                throw new HttpError(405, "method_not_allowed", "Only GET,POST,HEAD allowed").withHeader("Allow", "GET,POST,HEAD");
            });
        }
    }

    private SecuredDb member(Request req) {
        return access.database(req, SecuredDb.Level.MEMBER);
    }

    /** A path without the function's name: 404, after the caller was let in. */
    private Response invalidPath(Request req, String error) {
        member(req);
        throw new HttpError(404, error, "Invalid path.");
    }

    private static String ddocId(Request req) {
        return DocumentJson.DESIGN_PREFIX + req.param("ddoc");
    }

    /** The document id after the function's name ({@code /{db}/_design/{ddoc}/_x/{name}/a/b} is {@code a/b}), or null. */
    private static String docId(Request req) {
        List<String> p = req.path();
        return p.size() > 5 ? String.join("/", p.subList(5, p.size())) : null;
    }

    // ---------------------------------------------------------------- _update

    private Response update(Request req) {
        SecuredDb db = member(req);
        String name = req.path().get(4);
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        d.requireFunction("updates", name);
        String docId = docId(req);
        ObjectNode doc = docId == null ? null : openDoc(db, docId);
        DesignFunctions.Updated u = functions.update(d, name, doc, requestObject(req, db, docId));
        if (u.doc() == null) return external(u.response(), 200, List.of());
        DocumentJson.Parsed parsed = DocumentJson.parse(u.doc(), null);
        DocumentJson.validateId(parsed.id());
        UpdateResult written = db.updateOne(DocumentJson.toUpdate(parsed, true), true);
        return external(u.response(), 201, List.of(
                new Response.Header("X-Couch-Update-NewRev", written.rev().toString()),
                new Response.Header("X-Couch-Id", DocSupport.encode(parsed.id()))));
    }

    /** The document a function is given: as this user may see it, with {@code _conflicts}; null if there is none. */
    private static ObjectNode openDoc(SecuredDb db, String id) {
        try {
            StoredDoc d = db.database().get(id, null, true);
            return db.render(d, DocumentJson.Meta.CONFLICTS);
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return null;
            throw e;
        }
    }

    // ---------------------------------------------------------------- _show

    private Response show(Request req) {
        SecuredDb db = member(req);
        String name = req.path().get(4);
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        d.requireFunction("shows", name);
        String docId = docId(req);
        ObjectNode doc = docId == null ? null : openDoc(db, docId);
        String etag = showEtag(req, d, doc);
        if (DocumentHandlers.etagMatches(req, etag)) return DocumentHandlers.notModified(etag);
        JsonNode resp = functions.show(d, name, doc, requestObject(req, db, docId));
        // The ETag is CouchDB's, never the function's: it cannot be checked without running the function.
        return external(resp, 200, List.of(new Response.Header("ETag", etag), new Response.Header("Vary", "Accept")));
    }

    /** chttpd_show's show_etag: the design document's and the document's revisions, the Accept header and the user's roles. */
    private static String showEtag(Request req, DesignFunctions.Design d, ObjectNode doc) {
        String docRev = doc == null ? "nil" : doc.path("_rev").asText();
        String accept = String.valueOf(req.header("Accept"));
        List<String> roles = req.user() == null ? List.of() : req.user().roles();
        String term = Json.write(Json.MAPPER.valueToTree(List.of(d.rev(), docRev, accept, roles)));
        try {
            byte[] md5 = MessageDigest.getInstance("MD5").digest(term.getBytes(StandardCharsets.UTF_8));
            return "\"" + new BigInteger(1, md5).toString(36).toUpperCase(Locale.ROOT) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    // ---------------------------------------------------------------- _list

    /**
     * {@code .../_list/{list}/{view}} or {@code .../_list/{list}/{ddoc}/{view}}, the view also
     * {@code _all_docs}: the view query as {@code _view} reads it, its rows pulled by the list
     * function's {@code getRow()} as it asks. The function runs on a thread of its own (see
     * {@link ListRun}); the response starts with its first output, so {@code start()} may set the
     * code and headers until then, and a failure after that ends the body with CouchDB's error
     * line.
     */
    private Response list(Request req, ObjectNode body) throws InterruptedException {
        SecuredDb db = member(req);
        List<String> p = req.path();
        if (p.size() != 6 && p.size() != 7) throw new HttpError(404, "list_error", "Invalid path.");
        String name = p.get(4);
        String view = p.getLast();
        String viewDdoc = p.size() == 7 ? DocumentJson.DESIGN_PREFIX + p.get(5) : ddocId(req);
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        d.requireFunction("lists", name);
        ObjectNode reqObj = requestObject(req, db, null);
        if (body != null) reqObj.set("body", body); // chttpd_show hands a POST's body on decoded
        ListRun run = new ListRun(() -> {
            if (view.equals("_all_docs")) {
                AllDocsArgs a = AllDocsArgs.parse(req, body);
                dev.chaise.storage.DbInfo info = db.database().info();
                ObjectNode head = Json.NODES.objectNode().put("total_rows", info.docCount());
                if (a.updateSeq()) head.put("update_seq", info.updateSeq() == null ? "0" : info.updateSeq().toHex());
                return new Rows(head, AllDocsHandlers.allDocsRows(db, a), null);
            }
            ViewQuery q = ViewArgs.parse(req, body);
            ViewQueries.Result result = views.query(db.database(), viewDdoc, view, q);
            ObjectNode head = Json.NODES.objectNode();
            if (!result.reduced()) head.put("total_rows", result.totalRows()).put("offset", result.offset());
            if (q.updateSeq()) head.put("update_seq", result.updateSeq() == null ? "0" : result.updateSeq().toHex());
            java.util.Iterator<ObjectNode> rows = new java.util.Iterator<>() {
                @Override
                public boolean hasNext() {
                    return result.rows().hasNext();
                }

                @Override
                public ObjectNode next() {
                    ViewRow r = result.rows().next();
                    ObjectNode o = Json.NODES.objectNode();
                    if (r.id() != null) o.put("id", r.id());
                    o.set("key", r.key());
                    o.set("value", r.value());
                    if (r.doc() != null) o.set("doc", r.doc() instanceof ObjectNode doc ? db.visibleOrNull(doc) : r.doc());
                    return o;
                }
            };
            return new Rows(head, rows, result);
        }, (head, io) -> functions.list(d, name, head, reqObj, io));
        return run.start(req);
    }

    /** A list's view: the head ({@code total_rows}, {@code offset}, {@code update_seq}), the rows, what to close after. */
    private record Rows(ObjectNode head, java.util.Iterator<ObjectNode> rows, AutoCloseable resources) {}

    /**
     * One run of a list function, on a platform thread of its own: a list may wait on a slow
     * client for as long as it streams, and must not hold one of the engine's shared threads
     * meanwhile. Its output crosses to the response through a small queue, so a client that reads
     * slowly slows the function down; a client that goes away (or a response whose body is never
     * sent, as for HEAD) abandons the run, and the function's next call to the host fails.
     */
    private static final class ListRun implements RenderProgram.ListIO {
        /** How long the function waits for the response to take its output before giving up. */
        private static final long STALL_SECONDS = 60;

        private sealed interface Event permits Head, Chunk, End, Failed {}

        private record Head(int code, List<Response.Header> headers) implements Event {}

        private record Chunk(byte[] bytes) implements Event {}

        private record End() implements Event {}

        private record Failed(RuntimeException error) implements Event {}

        private final java.util.function.Supplier<Rows> open;
        private final java.util.function.BiConsumer<ObjectNode, RenderProgram.ListIO> body;
        private final BlockingQueue<Event> events = new ArrayBlockingQueue<>(32);
        private volatile boolean abandoned;
        private java.util.Iterator<ObjectNode> rows;
        private int code = 200;
        private List<Response.Header> headers = List.of(new Response.Header("Content-Type", Response.JSON));
        private boolean started;

        ListRun(java.util.function.Supplier<Rows> open, java.util.function.BiConsumer<ObjectNode, RenderProgram.ListIO> body) {
            this.open = open;
            this.body = body;
        }

        /** Starts the function and answers once it has produced its first output, ended or failed. */
        Response start(Request req) throws InterruptedException {
            Thread.ofPlatform().daemon().name("js-list").start(this::run);
            Event first = events.take();
            if (first instanceof Failed f) throw f.error();
            Head h = (Head) first;
            return new Response.Streamed(h.code(), h.headers(), out -> {
                try {
                    while (true) {
                        Event e = events.take();
                        switch (e) {
                            case Chunk c -> {
                                out.write(c.bytes());
                                if (events.isEmpty()) out.flush();
                            }
                            case Failed f -> {
                                // chttpd's send_chunked_error: the error as a last line of the body.
                                var m = dev.chaise.http.ErrorMapper.map(f.error(), req);
                                ObjectNode line = Json.NODES.objectNode().put("code", m.status()).put("error", m.error()).put("reason", m.reason());
                                out.write("\n" + Json.write(line) + "\n");
                                return;
                            }
                            default -> {
                                return;
                            }
                        }
                    }
                } finally {
                    abandon();
                }
            });
        }

        private void run() {
            Rows r = null;
            try {
                r = open.get();
                rows = r.rows();
                body.accept(r.head(), this);
                if (!started) post(new Head(200, List.of())); // nothing sent: CouchDB's empty 200
                post(new End());
            } catch (RuntimeException e) {
                if (!abandoned) post(new Failed(e));
            } finally {
                if (r != null && r.resources() != null) {
                    try {
                        r.resources().close();
                    } catch (Exception e) {
                        org.slf4j.LoggerFactory.getLogger(DesignFunctionHandlers.class).debug("closing a list's view", e);
                    }
                }
            }
        }

        private void abandon() {
            abandoned = true;
            events.clear(); // frees a function waiting to post
        }

        private void post(Event e) {
            try {
                if (abandoned || !events.offer(e, STALL_SECONDS, java.util.concurrent.TimeUnit.SECONDS)) {
                    abandoned = true;
                    throw new IllegalStateException("the list's response was abandoned");
                }
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", x);
            }
        }

        @Override
        public String nextRow() {
            if (abandoned) throw new IllegalStateException("the list's response was abandoned");
            return rows.hasNext() ? Json.write(rows.next()) : null;
        }

        /** couch_mrview_show's fixup_headers and send_non_empty_chunk: the head may change until the first output. */
        @Override
        public void flush(List<String> chunks, JsonNode head) {
            if (head != null && !started) {
                Response r = external(head, 200, List.of());
                code = r.status();
                headers = r.headers();
            }
            String out = String.join("", chunks);
            if (out.isEmpty()) return;
            if (!started) {
                started = true;
                post(new Head(code, headers));
            }
            post(new Chunk(out.getBytes(StandardCharsets.UTF_8)));
        }
    }

    // ---------------------------------------------------------------- _rewrite

    /**
     * {@code /{db}/_design/{ddoc}/_rewrite/...} ({@code chttpd_rewrite}): the design document's
     * {@code rewrites} rules ({@link Rewrites}) or function name a new target, relative to the
     * design document, and the request goes on there as if the client had sent it (same user,
     * same headers and body unless the function changes them). A function may answer itself
     * ({@code code}). Rewrites of rewrites stop at {@code [chttpd] rewrite_limit}.
     */
    private Response rewrite(Request req) throws Exception {
        SecuredDb db = member(req);
        int[] depth = REWRITES.get();
        int limit = config.get("chttpd", "rewrite_limit").map(String::strip).filter(v -> v.matches("[0-9]{1,9}")).map(Integer::parseInt).orElse(100);
        if (depth[0] >= limit) throw HttpError.badRequest("Exceeded rewrite recursion limit");
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        JsonNode rules = d.doc().get("rewrites");
        String prefix = "/" + DocSupport.encode(db.name()) + "/" + DocumentJson.DESIGN_PREFIX + DocSupport.encode(req.param("ddoc"));
        boolean secure = !"false".equals(config.get("chttpd", "secure_rewrites").map(String::strip).orElse("true"));
        Request next;
        if (rules != null && rules.isArray()) {
            List<String> p = req.path();
            String target = Rewrites.target(rules, req.method(), p.subList(4, p.size()), req.query(), prefix, secure);
            if (target == null) throw HttpError.notFound("missing");
            next = req.retarget(req.method(), target, req.headers(), req.content());
        } else if (rules != null && rules.isTextual()) {
            ObjectNode reqObj = requestObject(req, db, null);
            reqObj.remove(List.of("info", "form", "uuid", "id")); // couch_query_servers:rewrite leaves these out
            JsonNode r = functions.rewrite(d, reqObj);
            if (r == null) throw new HttpError(404, "rewrite_error", "Invalid path.");
            checkRewrite(r);
            if (r.has("code")) {
                List<Response.Header> headers = new ArrayList<>();
                if (r.path("headers").isObject()) for (Map.Entry<String, JsonNode> h : r.get("headers").properties()) headers.add(new Response.Header(h.getKey(), h.getValue().textValue()));
                byte[] body = r.has("body") ? r.get("body").textValue().getBytes(StandardCharsets.UTF_8) : req.body();
                return new Response.Full(r.get("code").intValue(), List.copyOf(headers), body);
            }
            next = functionTarget(req, r, prefix);
        } else {
            throw new HttpError(404, "rewrite_error", "Invalid path.");
        }
        depth[0]++;
        try {
            Router.Match m = router.match(next.method(), next.path());
            return m.handler().handle(next.withParams(m.params()));
        } finally {
            depth[0]--;
        }
    }

    /** couch_query_servers' validate_rewrite_response: what a rewrite function may return. */
    private static void checkRewrite(JsonNode r) {
        if (!r.isObject()) throw new HttpError(500, "rewrite_error", "bad rewrite");
        for (String text : List.of("method", "path", "body")) {
            if (r.has(text) && !r.get(text).isTextual()) throw new HttpError(500, "rewrite_error", "bad " + text);
        }
        for (String object : List.of("headers", "query")) {
            if (!r.has(object)) continue;
            if (!r.get(object).isObject()) throw new HttpError(500, "rewrite_error", "bad " + object);
            for (Map.Entry<String, JsonNode> e : r.get(object).properties()) {
                if (!e.getValue().isTextual()) throw new HttpError(500, "rewrite_error", "object key/value must be strings " + e.getKey() + "=" + e.getValue());
            }
        }
        if (r.has("code") && !(r.get("code").canConvertToExactIntegral() && r.get("code").asInt() >= 200 && r.get("code").asInt() < 600)) {
            throw new HttpError(500, "rewrite_error", "bad code");
        }
    }

    /** The request a rewrite function's answer names: its path under the design document, its method, query, headers and body. */
    private static Request functionTarget(Request req, JsonNode r, String prefix) {
        if (!r.has("path")) throw new HttpError(500, "rewrite_error", "Rewrite result must produce a new path.");
        StringBuilder target = new StringBuilder(Rewrites.normalize(prefix + "/" + r.get("path").textValue()));
        StringBuilder q = new StringBuilder();
        if (r.has("query")) {
            for (Map.Entry<String, JsonNode> e : r.get("query").properties()) q.append(q.isEmpty() ? "" : "&").append(quote(e.getKey())).append('=').append(quote(e.getValue().textValue()));
        } else {
            for (Map.Entry<String, List<String>> e : req.query().entrySet()) {
                for (String v : e.getValue()) q.append(q.isEmpty() ? "" : "&").append(quote(e.getKey())).append('=').append(quote(v));
            }
        }
        if (!q.isEmpty()) target.append('?').append(q);
        io.netty.handler.codec.http.HttpHeaders headers = req.headers();
        if (r.has("headers")) {
            headers = headers.copy();
            for (Map.Entry<String, JsonNode> h : r.get("headers").properties()) headers.set(h.getKey(), h.getValue().textValue());
        }
        dev.chaise.http.RequestBody content = req.content();
        if (r.has("body")) {
            byte[] b = r.get("body").textValue().getBytes(StandardCharsets.UTF_8);
            content = dev.chaise.http.RequestBody.of(b);
            if (headers == req.headers()) headers = headers.copy();
            headers.set("Content-Length", String.valueOf(b.length));
            headers.remove("Transfer-Encoding");
        }
        return req.retarget(r.has("method") ? r.get("method").textValue() : req.method(), target.toString(), headers, content);
    }

    private static String quote(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    // ---------------------------------------------------------------- the request object

    /** {@link JsonReqObject} for this request: a fresh uuid, the body as text ({@code "undefined"} when none was sent). */
    private ObjectNode requestObject(Request req, SecuredDb db, String docId) {
        boolean hasBody = req.headers().contains("Content-Length") || req.headers().contains("Transfer-Encoding");
        return JsonReqObject.of(req, db, docId, uuids.next(), hasBody ? new String(req.body(), StandardCharsets.UTF_8) : null);
    }

    // ---------------------------------------------------------------- the response object

    /**
     * chttpd_external's {@code send_external_response}: {@code code} (else {@code defaultCode}),
     * then {@code json} (sent as JSON), {@code body} (text/html), or {@code base64} (binary), with
     * {@code headers}; {@code set} replaces headers of the same name (CouchDB's own: the ETag, the
     * new revision). A body that is not JSON gets CouchDB's {@code Content-Security-Policy: sandbox}
     * first. Any other member is an {@code external_response_error}.
     */
    static Response external(JsonNode resp, int defaultCode, List<Response.Header> set) {
        int code = defaultCode;
        JsonNode json = null;
        byte[] data = new byte[0];
        String ctype = Response.JSON;
        List<Response.Header> headers = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : resp.properties()) {
            JsonNode v = e.getValue();
            switch (e.getKey()) {
                case "code" -> code = v.asInt(defaultCode);
                case "stop" -> { }
                case "json" -> {
                    json = v;
                    ctype = Response.JSON;
                }
                case "body" -> {
                    data = v.asText().getBytes(StandardCharsets.UTF_8);
                    ctype = "text/html; charset=utf-8";
                }
                case "base64" -> {
                    try {
                        data = Base64.getMimeDecoder().decode(v.asText());
                    } catch (IllegalArgumentException x) {
                        throw new HttpError(500, "external_response_error", "Invalid base64 data from external server");
                    }
                    ctype = "application/binary";
                }
                case "headers" -> {
                    headers.clear();
                    if (v.isObject()) for (Map.Entry<String, JsonNode> h : v.properties()) headers.add(new Response.Header(h.getKey(), h.getValue().asText()));
                }
                default -> throw new HttpError(500, "external_response_error", "Invalid data from external server: {<<\"" + e.getKey() + "\">>," + v + "}");
            }
        }
        for (Response.Header s : set) headers.removeIf(h -> h.name().equalsIgnoreCase(s.name()));
        headers.addAll(set);
        if (headers.stream().noneMatch(h -> h.name().equalsIgnoreCase("Content-Type"))) headers.addFirst(new Response.Header("Content-Type", ctype));
        if (json != null) {
            byte[] b = Json.write(json).getBytes(StandardCharsets.UTF_8);
            byte[] body = java.util.Arrays.copyOf(b, b.length + 1);
            body[b.length] = '\n';
            return new Response.Full(code, List.copyOf(headers), body);
        }
        headers.addFirst(new Response.Header("Content-Security-Policy", "sandbox"));
        return new Response.Full(code, List.copyOf(headers), data);
    }
}
