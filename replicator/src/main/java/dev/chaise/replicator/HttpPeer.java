package dev.chaise.replicator;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A remote database as a replication peer, over the JDK's HTTP client (one per replicator, so
 * connections are pooled across jobs): the requests CouchDB's replicator sends, retried as it
 * retries them ({@code retries_per_request}, waits doubling from 250 ms), documents with
 * attachments read from {@code open_revs} multipart and written as {@code multipart/related}
 * PUTs, both streamed.
 */
final class HttpPeer implements Peer {
    private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade", "accept", "user-agent");
    private static final long MAX_WAIT_MS = 5 * 60_000;
    /**
     * JSON from peers, where an attachment may come inline as base64 from a peer that cannot send
     * multipart (pouchdb-server): no cap on a string's length but the attachment size limit's.
     */
    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER = Json.MAPPER.copy();

    static {
        MAPPER.getFactory().setStreamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints.builder()
                .maxStringLength(Integer.MAX_VALUE).maxNestingDepth(1000).build());
    }

    /** Reads one value out of a longer stream (a changes row, last_seq). */
    private static final com.fasterxml.jackson.databind.ObjectReader VALUE = MAPPER.readerFor(JsonNode.class)
            .without(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final HttpClient client;
    private final Endpoint.Remote ep;
    private final Duration timeout;
    private final int retries;
    private final String authorization;
    private boolean bulkGetMissing;
    private final ReplicatorMetrics metrics;

    HttpPeer(HttpClient client, Endpoint.Remote ep, long timeoutMs, int retries, ReplicatorMetrics metrics) {
        this.client = client;
        this.metrics = metrics;
        this.ep = ep;
        this.timeout = Duration.ofMillis(timeoutMs);
        this.retries = retries;
        this.authorization = ep.user() == null ? null
                : "Basic " + Base64.getEncoder().encodeToString((ep.user() + ":" + ep.password()).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String uri() {
        return ep.url();
    }

    // ---------------------------------------------------------------- requests

    private record Resp(int status, String contentType, InputStream body) {
        JsonNode json() {
            try (InputStream in = body) {
                return MAPPER.readTree(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void discard() {
            try (InputStream in = body) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException e) {
                // the connection goes; nothing to keep
            }
        }
    }

    private String url(String path, Map<String, String> qs) {
        StringBuilder b = new StringBuilder(ep.url());
        if (path != null && !path.isEmpty()) {
            int q = b.indexOf("?");
            if (q >= 0) b.insert(q, path);
            else b.append(path);
        }
        if (qs != null && !qs.isEmpty()) {
            b.append(b.indexOf("?") >= 0 ? '&' : '?');
            boolean first = true;
            for (Map.Entry<String, String> e : qs.entrySet()) {
                if (!first) b.append('&');
                first = false;
                b.append(enc(e.getKey())).append('=').append(enc(e.getValue()));
            }
        }
        return b.toString();
    }

    static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A document id in a path: '/' kept after _design/ and _local/, as CouchDB's encode_doc_id. */
    static String docPath(String id) {
        for (String prefix : List.of("_design/", "_local/")) {
            if (id.startsWith(prefix)) return prefix + enc(id.substring(prefix.length()));
        }
        return enc(id);
    }

    private HttpRequest.Builder request(String method, String url, HttpRequest.BodyPublisher body, String contentType, String accept) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(timeout).method(method, body == null ? HttpRequest.BodyPublishers.noBody() : body);
        b.header("Accept", accept == null ? "application/json" : accept);
        b.header("User-Agent", ReplicationId.USER_AGENT);
        if (contentType != null) b.header("Content-Type", contentType);
        if (authorization != null) b.header("Authorization", authorization);
        for (Endpoint.Header h : ep.headers()) {
            if (RESTRICTED.contains(h.name().toLowerCase(Locale.ROOT))) continue;
            try {
                b.header(h.name(), h.value());
            } catch (IllegalArgumentException e) {
                // a header the JDK client will not send
            }
        }
        return b;
    }

    /**
     * Sends a request whose body can be sent again, retrying connection failures, timeouts and 5xx
     * answers {@link #retries} times with doubling waits, as couch_replicator_httpc does.
     */
    private Resp send(String method, String url, byte[] body, String contentType, String accept) {
        return send(method, url, body, contentType, accept, false);
    }

    /** @param stream whether the answer is read as it arrives (a feed, a multipart document): counted as CouchDB's stream responses */
    private Resp send(String method, String url, byte[] body, String contentType, String accept, boolean stream) {
        long wait = 250;
        for (int attempt = 0; ; attempt++) {
            try {
                HttpRequest req = request(method, url, body == null ? null : HttpRequest.BodyPublishers.ofByteArray(body), contentType, accept).build();
                HttpResponse<InputStream> r = counted(req, stream);
                int status = r.statusCode();
                if ((status >= 500 || status == 408 || status == 429) && attempt < retries) {
                    new Resp(status, null, r.body()).discard();
                    sleep(wait);
                    wait = Math.min(MAX_WAIT_MS, wait * 2);
                    continue;
                }
                return new Resp(status, r.headers().firstValue("Content-Type").orElse(""), r.body());
            } catch (IOException e) {
                if (attempt >= retries) throw failed(method, url, e);
                sleep(wait);
                wait = Math.min(MAX_WAIT_MS, wait * 2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Replication.Stopped();
            } catch (IllegalArgumentException e) {
                throw failed(method, url, e);
            }
        }
    }

    /**
     * One request sent, counted as couch_replicator_httpc counts it: a response under 500 (not a
     * redirect, 408 or 429) is a success, 408 and 5xx a failure; a stream that breaks is a failure
     * too, where a plain request that got no answer is only retried.
     */
    private HttpResponse<InputStream> counted(HttpRequest req, boolean stream) throws IOException, InterruptedException {
        metrics.requests.increment();
        HttpResponse<InputStream> r;
        try {
            r = client.send(req, HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            if (stream) metrics.streamResponsesFailure.increment();
            throw e;
        }
        int status = r.statusCode();
        if (status == 408 || status >= 500) (stream ? metrics.streamResponsesFailure : metrics.responsesFailure).increment();
        else if (status >= 200 && status < 300 || status >= 400 && status != 429) (stream ? metrics.streamResponsesSuccess : metrics.responsesSuccess).increment();
        return r;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Replication.Stopped();
        }
    }

    /** A request that failed for good, named as CouchDB names it. */
    private ReplicationException failed(String method, String url, Throwable e) {
        String why = e instanceof ConnectException ? "econnrefused"
                : e instanceof HttpConnectTimeoutException ? "conn_timeout"
                : e instanceof HttpTimeoutException ? "req_timedout"
                : e instanceof UnresolvedAddressException || (e.getCause() instanceof java.nio.channels.UnresolvedAddressException) ? "nxdomain"
                : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return new ReplicationException(500, "http_request_failed", method + " " + strip(url) + ": " + why, e);
    }

    /** A URL as CouchDB shows it: without the password. */
    static String strip(String url) {
        try {
            URI u = new URI(url);
            if (u.getRawUserInfo() == null) return url;
            return url.replace(u.getRawUserInfo() + "@", "");
        } catch (Exception e) {
            return url;
        }
    }

    private ReplicationException unexpected(String what, Resp r) {
        String text;
        try (InputStream in = r.body()) {
            text = new String(in.readNBytes(2000), StandardCharsets.UTF_8);
        } catch (IOException e) {
            text = "";
        }
        String error = "http_error_code";
        String reason = r.status() + " " + what + " " + ep.url() + (text.isBlank() ? "" : " " + text.strip());
        return new ReplicationException(500, error, reason);
    }

    // ---------------------------------------------------------------- database

    @Override
    public ObjectNode info() {
        Resp r = send("GET", ep.url(), null, null, null);
        return switch (r.status()) {
            case 200 -> {
                JsonNode j = r.json();
                if (!(j instanceof ObjectNode o) || !o.has("update_seq")) throw dbNotFound();
                yield o;
            }
            case 401 -> {
                r.discard();
                throw new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + ep.url());
            }
            case 403 -> {
                r.discard();
                throw new ReplicationException(403, "forbidden", ep.url());
            }
            default -> {
                r.discard();
                throw dbNotFound();
            }
        };
    }

    private ReplicationException dbNotFound() {
        return new ReplicationException(404, "db_not_found", "could not open " + ep.url());
    }

    @Override
    public void create(ObjectNode params) {
        Map<String, String> qs = new LinkedHashMap<>();
        if (params != null) params.properties().forEach(e -> qs.put(e.getKey(), e.getValue().isTextual() ? e.getValue().textValue() : e.getValue().toString()));
        Resp r = send("PUT", url("", qs), new byte[0], "application/json", null);
        r.discard();
        if (r.status() == 401) throw new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + ep.url());
        if (r.status() == 403) throw new ReplicationException(403, "forbidden", ep.url());
    }

    @Override
    public ObjectNode getLocal(String id) {
        return getDoc(id);
    }

    @Override
    public ObjectNode getDoc(String id) {
        Resp r = send("GET", url(docPath(id), null), null, null, null);
        if (r.status() == 200 && r.json() instanceof ObjectNode o) return o;
        if (r.status() != 200) r.discard();
        if (r.status() == 404) return null;
        if (r.status() == 401 || r.status() == 403) throw new ReplicationException(r.status(), r.status() == 401 ? "unauthorized" : "forbidden", "GET " + ep.url() + docPath(id));
        return null;
    }

    @Override
    public void putLocal(String id, ObjectNode body) {
        for (int attempt = 0; ; attempt++) {
            ObjectNode current = getLocal(id);
            ObjectNode doc = body.deepCopy();
            doc.put("_id", id);
            if (current != null && current.has("_rev")) doc.set("_rev", current.get("_rev"));
            else doc.remove("_rev");
            Resp r = send("PUT", url(docPath(id), null), bytes(doc), "application/json", null);
            if (r.status() == 201 || r.status() == 200 || r.status() == 202) {
                r.discard();
                return;
            }
            if (r.status() == 409 && attempt < 5) {
                r.discard();
                continue;
            }
            throw new ReplicationException(500, "checkpoint_commit_failure", "Error updating the checkpoint document " + id + " on " + ep.url() + ": " + r.status());
        }
    }

    @Override
    public String ensureFullCommit() {
        Resp r = send("POST", url("_ensure_full_commit", null), new byte[0], "application/json", null);
        if (r.status() == 201 || r.status() == 200) {
            JsonNode j = r.json();
            return j.path("instance_start_time").asText("0");
        }
        r.discard();
        return "0"; // peers without it (PouchDB) commit every write anyway
    }

    // ---------------------------------------------------------------- changes

    @Override
    public void changes(ChangesQuery q, ChangesSink sink) throws InterruptedException {
        Map<String, String> qs = new LinkedHashMap<>();
        qs.put("feed", q.continuous() ? "continuous" : "normal");
        qs.put("style", q.winningOnly() ? "main_only" : "all_docs");
        qs.put("since", q.since() == null ? "0" : q.since().isTextual() ? q.since().textValue() : q.since().toString());
        qs.put("timeout", Long.toString(q.timeoutMs()));
        byte[] body = null;
        if (q.docIds() != null) {
            qs.put("filter", "_doc_ids");
            ObjectNode b = Json.NODES.objectNode();
            ArrayNode a = b.putArray("doc_ids");
            q.docIds().forEach(a::add);
            body = bytes(b);
        } else if (q.selector() != null) {
            qs.put("filter", "_selector");
            ObjectNode b = Json.NODES.objectNode();
            b.set("selector", q.selector());
            body = bytes(b);
        } else if (q.filter() != null) {
            qs.put("filter", q.filter());
            q.queryParams().properties().forEach(e -> qs.putIfAbsent(e.getKey(), e.getValue().asText()));
        }
        Resp r = send(body == null ? "GET" : "POST", url("_changes", qs), body, body == null ? null : "application/json", null, true);
        if (r.status() != 200) {
            if (r.status() == 404) {
                JsonNode j = r.json();
                throw new ReplicationException(404, "not_found", j.path("reason").asText("missing") + " (" + ep.url() + "_changes)");
            }
            throw unexpected("_changes", r);
        }
        try (InputStream in = r.body()) {
            if (q.continuous()) continuous(in, sink);
            else normal(in, sink);
        } catch (IOException e) {
            throw new ReplicationException(500, "changes_reader_died", "_changes from " + ep.url() + ": " + e.getMessage(), e);
        }
    }

    private static void normal(InputStream in, ChangesSink sink) throws IOException, InterruptedException {
        try (JsonParser p = MAPPER.createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) throw new IOException("not a changes response");
            JsonNode lastSeq = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                if (name.equals("results") && p.currentToken() == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        JsonNode row = VALUE.readValue(p);
                        Change c = change(row);
                        if (c != null) sink.change(c);
                    }
                } else if (name.equals("last_seq")) {
                    lastSeq = VALUE.readValue(p);
                } else {
                    p.skipChildren();
                }
            }
            if (lastSeq != null) sink.lastSeq(lastSeq);
        }
    }

    private static void continuous(InputStream in, ChangesSink sink) throws IOException, InterruptedException {
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = r.readLine(); line != null; line = r.readLine()) {
            if (line.isBlank()) continue; // heartbeat
            JsonNode row = MAPPER.readTree(line);
            if (row.has("last_seq")) {
                sink.lastSeq(row.get("last_seq"));
                return;
            }
            Change c = change(row);
            if (c != null) sink.change(c);
        }
    }

    private static Change change(JsonNode row) {
        String id = row.path("id").asText("");
        if (id.isEmpty()) return null; // CouchDB ignores rows without an id
        List<String> revs = new ArrayList<>();
        for (JsonNode c : row.path("changes")) revs.add(c.path("rev").asText());
        return new Change(row.get("seq"), id, revs, row.path("deleted").asBoolean(false));
    }

    @Override
    public Long pending(JsonNode since) {
        try {
            Map<String, String> qs = new LinkedHashMap<>();
            qs.put("since", since == null ? "0" : since.isTextual() ? since.textValue() : since.toString());
            qs.put("limit", "0");
            Resp r = send("GET", url("_changes", qs), null, null, null);
            if (r.status() != 200) {
                r.discard();
                return null;
            }
            JsonNode p = r.json().get("pending");
            return p != null && p.canConvertToLong() ? p.longValue() : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    // ---------------------------------------------------------------- revs_diff, reads

    @Override
    public Map<String, RevsDiffEntry> revsDiff(Map<String, List<String>> revs) {
        ObjectNode body = Json.NODES.objectNode();
        revs.forEach((id, rs) -> {
            ArrayNode a = body.putArray(id);
            rs.forEach(a::add);
        });
        Resp r = send("POST", url("_revs_diff", null), bytes(body), "application/json", null);
        if (r.status() != 200) throw unexpected("_revs_diff", r);
        Map<String, RevsDiffEntry> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : r.json().properties()) {
            out.put(e.getKey(), new RevsDiffEntry(texts(e.getValue().get("missing")), texts(e.getValue().get("possible_ancestors"))));
        }
        return out;
    }

    private static List<String> texts(JsonNode a) {
        if (a == null || !a.isArray()) return List.of();
        List<String> out = new ArrayList<>(a.size());
        for (JsonNode x : a) out.add(x.asText());
        return out;
    }

    @Override
    public int fetch(List<Wanted> wanted, boolean bulkGet, FetchSink sink) {
        List<Wanted> individually = wanted;
        int viaBulkGet = 0;
        if (bulkGet && !bulkGetMissing && !wanted.isEmpty()) {
            individually = new ArrayList<>();
            List<ObjectNode> docs = new ArrayList<>();
            if (bulkGet(wanted, docs, individually)) {
                viaBulkGet = docs.size();
                for (ObjectNode d : docs) sink.accept(new Fetched(d, List.of()));
            } else {
                individually = wanted;
            }
        }
        for (Wanted w : individually) openRevs(w, sink);
        return viaBulkGet;
    }

    /**
     * {@code _bulk_get} without attachment bodies: documents without attachments go to {@code docs},
     * the others (and errors) to {@code rest}. False if the peer has no {@code _bulk_get}.
     */
    private boolean bulkGet(List<Wanted> wanted, List<ObjectNode> docs, List<Wanted> rest) {
        ObjectNode body = Json.NODES.objectNode();
        ArrayNode list = body.putArray("docs");
        // No atts_since: documents with attachments are fetched with open_revs, streamed, so
        // their bodies need not come here too.
        for (Wanted w : wanted) list.addObject().put("id", w.id()).put("rev", w.rev());
        Map<String, String> qs = new LinkedHashMap<>();
        qs.put("latest", "true");
        qs.put("revs", "true");
        qs.put("attachments", "false");
        Resp r = send("POST", url("_bulk_get", qs), bytes(body), "application/json", "application/json");
        if (r.status() != 200) {
            r.discard();
            if (r.status() >= 400 && r.status() < 500 && r.status() != 401 && r.status() != 403) {
                bulkGetMissing = true; // an older peer: open_revs from now on
                return false;
            }
            throw new ReplicationException(500, "bulk_get_failed", r.status() + " from " + ep.url() + "_bulk_get");
        }
        JsonNode results = r.json().get("results");
        if (results == null || !results.isArray() || results.size() != wanted.size()) {
            bulkGetMissing = true;
            return false;
        }
        for (int i = 0; i < wanted.size(); i++) {
            JsonNode res = results.get(i);
            Wanted w = wanted.get(i);
            JsonNode ds = res.path("docs");
            boolean taken = false;
            if (w.id().equals(res.path("id").asText()) && ds.size() >= 1) {
                taken = true;
                for (JsonNode d : ds) {
                    JsonNode ok = d.get("ok");
                    if (!(ok instanceof ObjectNode doc) || (doc.has("_attachments") && !doc.get("_attachments").isEmpty())) {
                        taken = false;
                        break;
                    }
                }
                if (taken) for (JsonNode d : ds) docs.add((ObjectNode) d.get("ok"));
            }
            if (!taken) rest.add(w);
        }
        return true;
    }

    /** One revision with {@code open_revs}, as multipart so attachment bodies stream; JSON if the peer answers JSON. */
    private void openRevs(Wanted w, FetchSink sink) {
        Map<String, String> qs = new LinkedHashMap<>();
        qs.put("revs", "true");
        qs.put("latest", "true");
        qs.put("open_revs", "[" + Json.NODES.textNode(w.rev()) + "]");
        if (!w.possibleAncestors().isEmpty()) {
            ArrayNode a = Json.NODES.arrayNode();
            w.possibleAncestors().forEach(a::add);
            qs.put("atts_since", a.toString());
        }
        qs.put("attachments", "true");
        Resp r = send("GET", url(docPath(w.id()), qs), null, null, "multipart/mixed", true);
        if (r.status() == 404) {
            r.discard();
            return; // gone from the source: nothing to copy
        }
        if (r.status() != 200) throw unexpected("GET " + w.id(), r);
        try (InputStream in = r.body()) {
            String ct = r.contentType().toLowerCase(Locale.ROOT);
            if (ct.startsWith("multipart/")) {
                MultipartStream parts = new MultipartStream(in, MultipartStream.boundary(r.contentType()));
                for (Map<String, String> h = parts.nextPart(); h != null; h = parts.nextPart()) {
                    String pct = h.getOrDefault("content-type", "application/json");
                    if (pct.toLowerCase(Locale.ROOT).startsWith("multipart/related")) {
                        related(parts.content(), MultipartStream.boundary(pct), w, sink);
                    } else {
                        JsonNode j = MAPPER.readTree(parts.content());
                        if (j instanceof ObjectNode doc && doc.has("_id") && !pct.contains("error")) inline(doc, sink);
                    }
                }
            } else {
                for (JsonNode part : MAPPER.readTree(in)) {
                    if (part.get("ok") instanceof ObjectNode doc) inline(doc, sink);
                }
            }
        } catch (IOException e) {
            throw new ReplicationException(500, "open_doc_revs_failed", "GET " + ep.url() + docPath(w.id()) + ": " + e.getMessage(), e);
        } catch (MultipartStream.Malformed e) {
            throw new ReplicationException(500, "open_doc_revs_failed", "GET " + ep.url() + docPath(w.id()) + ": " + e.getMessage(), e);
        }
    }

    /** A document whose attachment bodies are inline base64 (a JSON answer): decoded as bodies. */
    private static void inline(ObjectNode doc, FetchSink sink) {
        List<AttachmentBody> bodies = new ArrayList<>();
        JsonNode atts = doc.get("_attachments");
        if (atts != null && atts.isObject()) {
            for (Map.Entry<String, JsonNode> e : atts.properties()) {
                ObjectNode meta = (ObjectNode) e.getValue();
                if (!meta.has("data")) continue;
                byte[] data = Base64.getDecoder().decode(meta.remove("data").asText());
                meta.put("follows", true);
                meta.put("length", data.length);
                meta.remove("stub");
                InputStream body = new ByteArrayInputStream(data);
                bodies.add(new AttachmentBody(e.getKey(), data.length, () -> body));
            }
        }
        sink.accept(new Fetched(doc, bodies));
    }

    /** A document with its attachments: the JSON first, then one part per {@code follows} attachment, in order. */
    private static void related(InputStream in, String boundary, Wanted w, FetchSink sink) throws IOException {
        MultipartStream parts = new MultipartStream(in, boundary);
        if (parts.nextPart() == null) return;
        JsonNode j = MAPPER.readTree(parts.content());
        if (!(j instanceof ObjectNode doc)) return;
        List<AttachmentBody> bodies = new ArrayList<>();
        JsonNode atts = doc.get("_attachments");
        if (atts != null && atts.isObject()) {
            for (Map.Entry<String, JsonNode> e : atts.properties()) {
                ObjectNode meta = (ObjectNode) e.getValue();
                if (!meta.path("follows").asBoolean(false)) continue;
                long length = meta.has("encoded_length") ? -1 : meta.path("length").asLong(-1);
                String name = e.getKey();
                boolean[] opened = {false};
                bodies.add(new AttachmentBody(name, length, () -> {
                    if (opened[0]) throw new IllegalStateException("an attachment part streams once");
                    opened[0] = true;
                    if (parts.nextPart() == null) throw new MultipartStream.Malformed("missing the body of attachment " + name);
                    return parts.content();
                }));
            }
        }
        sink.accept(new Fetched(doc, bodies));
    }

    // ---------------------------------------------------------------- writes

    @Override
    public List<WriteError> writeDocs(List<ObjectNode> docs) {
        ObjectNode body = Json.NODES.objectNode();
        body.put("new_edits", false);
        ArrayNode a = body.putArray("docs");
        docs.forEach(a::add);
        Resp r = send("POST", url("_bulk_docs", null), bytes(body), "application/json", null);
        if (r.status() == 413 && docs.size() > 1) {
            r.discard();
            List<WriteError> out = new ArrayList<>(writeDocs(docs.subList(0, docs.size() / 2)));
            out.addAll(writeDocs(docs.subList(docs.size() / 2, docs.size())));
            return out;
        }
        if (r.status() == 413) {
            r.discard();
            ObjectNode d = docs.getFirst();
            return List.of(new WriteError(d.path("_id").asText(), d.path("_rev").asText(), "too_large", "the request entity is too large"));
        }
        if (r.status() == 401 || r.status() == 403) {
            JsonNode j = r.json();
            throw new ReplicationException(r.status(), j.path("error").asText(r.status() == 401 ? "unauthorized" : "forbidden"), j.path("reason").asText(ep.url()));
        }
        if (r.status() != 201 && r.status() != 200) throw unexpected("_bulk_docs", r);
        List<WriteError> out = new ArrayList<>();
        for (JsonNode row : r.json()) {
            if (row.has("error")) {
                out.add(new WriteError(row.path("id").asText(), row.path("rev").asText(), row.path("error").asText(), row.path("reason").asText()));
            }
        }
        return out;
    }

    @Override
    public WriteError writeDoc(Fetched f) {
        ObjectNode doc = f.doc();
        String id = doc.path("_id").asText();
        String boundary = HexFormat.of().formatHex(randomBytes());
        byte[] head = ("--" + boundary + "\r\nContent-Type: application/json\r\n\r\n").getBytes(StandardCharsets.UTF_8);
        byte[] json = bytes(doc);
        List<InputStream> pieces = new ArrayList<>();
        pieces.add(new ByteArrayInputStream(head));
        pieces.add(new ByteArrayInputStream(json));
        long length = head.length + json.length;
        for (AttachmentBody b : f.attachments()) {
            JsonNode meta = doc.path("_attachments").path(b.name());
            byte[] partHead = ("\r\n--" + boundary + "\r\nContent-Disposition: attachment; filename=\"" + b.name().replace("\"", "\\\"")
                    + "\"\r\nContent-Type: " + meta.path("content_type").asText("application/octet-stream")
                    + (b.length() >= 0 ? "\r\nContent-Length: " + b.length() : "") + "\r\n\r\n").getBytes(StandardCharsets.UTF_8);
            pieces.add(new ByteArrayInputStream(partHead));
            pieces.add(new LazyStream(b));
            length = length < 0 || b.length() < 0 ? -1 : length + partHead.length + b.length();
        }
        byte[] tail = ("\r\n--" + boundary + "--").getBytes(StandardCharsets.UTF_8);
        pieces.add(new ByteArrayInputStream(tail));
        if (length >= 0) length += tail.length;
        InputStream all = new SequenceInputStream(Collections.enumeration(pieces));
        HttpRequest.BodyPublisher pub = length >= 0
                ? HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() -> all), length)
                : HttpRequest.BodyPublishers.ofInputStream(() -> all);
        Map<String, String> qs = Map.of("new_edits", "false");
        HttpRequest req = request("PUT", url(docPath(id), qs), pub, "multipart/related; boundary=\"" + boundary + "\"", null).build();
        HttpResponse<InputStream> r;
        try {
            r = counted(req, false); // a stream cannot be sent twice: no retry here
        } catch (IOException e) {
            throw failed("PUT", req.uri().toString(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Replication.Stopped();
        }
        Resp resp = new Resp(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
        if (resp.status() == 201 || resp.status() == 202 || resp.status() == 200) {
            resp.discard();
            return null;
        }
        JsonNode j;
        try {
            j = resp.json();
        } catch (RuntimeException e) {
            j = Json.NODES.objectNode();
        }
        String error = j.path("error").asText("http_error_code");
        String reason = j.path("reason").asText(Integer.toString(resp.status()));
        if (resp.status() == 401 || resp.status() == 403 || resp.status() == 413 || resp.status() == 415 || resp.status() == 400 || resp.status() == 409 || resp.status() == 412) {
            return new WriteError(id, doc.path("_rev").asText(), error, reason);
        }
        throw new ReplicationException(500, "doc_write_failed", error + ": " + reason);
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    /** Opens an attachment body only when the request gets to it, so parts stream in order. */
    private static final class LazyStream extends InputStream {
        private final AttachmentBody body;
        private InputStream in;

        LazyStream(AttachmentBody body) {
            this.body = body;
        }

        private InputStream in() {
            if (in == null) in = body.open();
            return in;
        }

        @Override
        public int read() throws IOException {
            return in().read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return in().read(b, off, len);
        }
    }

    static byte[] bytes(JsonNode j) {
        try {
            return Json.MAPPER.writeValueAsBytes(j);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        // connections belong to the replicator's shared client
    }
}
