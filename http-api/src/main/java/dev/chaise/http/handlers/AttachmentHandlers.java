package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.replicator.MultipartStream;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.StoredAttachment;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.RevId;
import java.util.ArrayList;
import java.util.Map;
import java.util.List;

/**
 * Standalone attachments: {@code GET/HEAD/PUT/DELETE /{db}/{doc}/{att}} (names may hold
 * {@code /}), for normal and design documents. A PUT or DELETE is an edit of the document that
 * keeps every other attachment as a stub; its body streams in (see {@link Database#storeAttachment}).
 * GET streams the chunks, one transaction per few chunks (chunks are content-addressed and never
 * change), and serves {@code Range}s from the chunks they cover; a body stored gzipped goes as
 * stored to a client that accepts gzip and is decoded as it streams for the rest. {@code POST
 * /{db}/{doc}} takes an HTML form's upload ({@code multipart/form-data}).
 */
public final class AttachmentHandlers {
    private static final String MISSING = "Document is missing attachment";

    private final Access access;

    public AttachmentHandlers(Access access) {
        this.access = access;
    }

    public void register(Router r) {
        for (String path : List.of("/{db}/{docid}/{att...}", "/{db}/_design/{ddoc}/{att...}")) {
            r.add("GET", path, this::get);
            r.add("PUT", path, this::put);
            r.add("DELETE", path, this::delete);
        }
        for (String path : List.of("/{db}/{docid}", "/{db}/_design/{ddoc}")) r.add("POST", path, this::form);
    }

    private static String docId(Request req) {
        return req.param("ddoc") != null ? DocumentJson.DESIGN_PREFIX + req.param("ddoc") : req.param("docid");
    }

    private Response get(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        String id = docId(req);
        db.requirePartition(id);
        db.checkReader(id);
        String name = req.param("att");
        RevId rev = req.query("rev") == null ? null : RevId.parse(req.query("rev"));
        StoredDoc d = db.get(id, rev, false);
        JsonNode meta = d.body().path("_attachments").get(name);
        if (meta == null) throw StorageException.notFound(MISSING);
        String digest = meta.path("digest").asText();
        // chttpd_db: the ETag is the md5 in base64, without the digest's "md5-" prefix.
        String etag = "\"" + (digest.startsWith("md5-") ? digest.substring(4) : digest) + "\"";
        if (DocumentHandlers.etagMatches(req, etag)) return DocumentHandlers.notModified(etag);
        String type = meta.path("content_type").asText("application/octet-stream");
        String encoding = meta.path("encoding").asText(null);
        if (encoding != null) return encoded(req, db.database(), id, meta, type, etag, encoding);
        long length = meta.path("length").asLong();
        List<Response.Header> headers = new ArrayList<>(List.of(new Response.Header("Content-Type", type),
                new Response.Header("ETag", etag), new Response.Header("Accept-Ranges", "bytes")));
        List<long[]> ranges = ranges(req.header("Range"), length);
        if (ranges != null && ranges.size() == 1) {
            long[] r = ranges.getFirst();
            headers.add(new Response.Header("Content-Range", "bytes " + r[0] + "-" + r[1] + "/" + length));
            if (req.isHead()) return new Response.Full(206, headers, new byte[0]);
            headers.add(contentLength(r[1] + 1 - r[0]));
            return new Response.Streamed(206, headers, out -> stream(out, db.database(), id, digest, r[0], r[1] + 1));
        }
        if (ranges != null && ranges.size() < MAX_RANGES) {
            // As CouchDB: each range a part of multipart/byteranges, in the order asked.
            String boundary = MultipartDocs.boundary();
            List<Response.Header> multi = new ArrayList<>(headers);
            multi.set(0, new Response.Header("Content-Type", "multipart/byteranges; boundary=\"" + boundary + "\""));
            if (req.isHead()) return new Response.Full(206, multi, new byte[0]);
            return new Response.Streamed(206, multi, out -> {
                out.write("--" + boundary);
                for (long[] r : ranges) {
                    out.write("\r\nContent-Type: " + type + "\r\nContent-Range: bytes " + r[0] + "-" + r[1] + "/" + length + "\r\n\r\n");
                    stream(out, db.database(), id, digest, r[0], r[1] + 1);
                    out.write("\r\n--" + boundary);
                }
                out.write("--");
            });
        }
        if (req.isHead()) return head(headers, length);
        headers.add(contentLength(length));
        return new Response.Streamed(200, headers, out -> stream(out, db.database(), id, digest, 0, length));
    }

    /**
     * An attachment stored encoded (gzip), as chttpd_db serves it: as stored, with
     * {@code Content-Encoding}, to a client whose {@code Accept-Encoding} takes it; decoded as it
     * streams otherwise. {@code Accept-Ranges: none}: a satisfiable {@code Range} gets the whole
     * body (200); one that cannot be satisfied within the length served is still 416.
     */
    private static Response encoded(Request req, Database db, String id, JsonNode meta, String type, String etag, String encoding) {
        boolean asStored = acceptsEncoding(req.header("Accept-Encoding"), encoding);
        long length = asStored ? meta.path("encoded_length").asLong() : meta.path("length").asLong();
        ranges(req.header("Range"), length); // only for its 416
        List<Response.Header> headers = new ArrayList<>(List.of(new Response.Header("Content-Type", type), new Response.Header("ETag", etag)));
        if (asStored) headers.add(new Response.Header("Content-Encoding", encoding));
        headers.add(new Response.Header("Accept-Ranges", "none"));
        if (req.isHead()) return head(headers, length);
        // A body that came gzipped has no known identity length (both lengths are the encoded one): chunked, as chttpd_db.
        if (asStored || length != meta.path("encoded_length").asLong()) headers.add(contentLength(length));
        if (asStored) return new Response.Streamed(200, headers, out -> stream(out, db, id, meta.path("digest").asText(), 0, length));
        return new Response.Streamed(200, headers, out -> {
            try (java.io.InputStream in = db.attachmentStream(id, meta, true)) {
                byte[] buf = new byte[Database.attachmentChunkSize()];
                for (int n; (n = in.readNBytes(buf, 0, buf.length)) > 0; ) out.write(n == buf.length ? buf.clone() : java.util.Arrays.copyOf(buf, n));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /** A HEAD answer that announces the length a GET would send (a streamed answer's headers are kept as given). */
    private static Response head(List<Response.Header> headers, long length) {
        headers.add(contentLength(length));
        return new Response.Streamed(200, headers, out -> {});
    }

    /** A streamed body of a known length is sent with it, not chunked (couch_httpd's start_response_length). */
    private static Response.Header contentLength(long length) {
        return new Response.Header("Content-Length", String.valueOf(length));
    }

    /**
     * As couch_httpd:accepted_encodings (mochiweb's): whether {@code Accept-Encoding} takes
     * {@code encoding} with a q above 0, named or, when not named, through {@code *}.
     */
    static boolean acceptsEncoding(String header, String encoding) {
        if (header == null) return false;
        Double named = null;
        Double any = null;
        for (String part : header.split(",")) {
            String[] p = part.split(";");
            String coding = p[0].strip().toLowerCase(java.util.Locale.ROOT);
            double q = 1;
            for (int i = 1; i < p.length; i++) {
                String param = p[i].strip();
                if (param.startsWith("q=")) {
                    try {
                        q = Double.parseDouble(param.substring(2).strip());
                    } catch (NumberFormatException e) {
                        q = 0;
                    }
                }
            }
            if (coding.equals(encoding)) named = q;
            else if (coding.equals("*")) any = q;
        }
        Double q = named != null ? named : any;
        return q != null && q > 0;
    }

    /** Bytes {@code [from, to)} of an attachment, reading only the chunks they lie in, a few per transaction. */
    static void stream(dev.chaise.http.ResponseStream out, Database db, String id, String digest, long from, long to) {
        int size = Database.attachmentChunkSize();
        long pos = from / size * size;
        for (long next = from / size; pos < to; ) {
            List<byte[]> chunks = db.attachmentChunks(id, digest, next, 16);
            for (byte[] c : chunks) {
                int a = (int) Math.max(0, from - pos);
                int b = (int) Math.min(c.length, to - pos);
                if (b > a) out.write(a == 0 && b == c.length ? c : java.util.Arrays.copyOfRange(c, a, b));
                pos += c.length;
                if (pos >= to) break;
            }
            if (chunks.size() < 16) break;
            next += chunks.size();
        }
    }

    /** Ten ranges or more get the whole attachment, as in CouchDB. */
    static final int MAX_RANGES = 10;

    /**
     * The byte ranges of a {@code Range} header, as chttpd_db:parse_ranges reads mochiweb's parse:
     * null to send the whole attachment (no header, one mochiweb cannot parse, or a
     * {@code 0-} among them), each clipped to the length. A range that ends before it starts,
     * after clipping, is 416 {@code requested_range_not_satisfiable}.
     */
    static List<long[]> ranges(String header, long length) {
        if (header == null || !header.startsWith("bytes=")) return null;
        String[] specs = header.substring(6).split(",", -1);
        List<Long[]> parsed = new ArrayList<>(specs.length);
        for (String spec : specs) {
            Long[] r = parseRange(spec.strip());
            if (r == null) return null;
            parsed.add(r);
        }
        List<long[]> out = new ArrayList<>(specs.length);
        for (Long[] r : parsed) {
            if (r[0] != null && r[0] == 0 && r[1] == null) return null;
            long from = r[0] == null ? Math.max(0, length - r[1]) : r[0];
            long to = r[0] == null || r[1] == null ? length - 1 : Math.min(r[1], length - 1);
            if (to < from) throw HttpError.rangeNotSatisfiable();
            out.add(new long[] {from, to});
        }
        return out;
    }

    /** {@code a-b}, {@code a-} or {@code -n} as {from, to} with null for a missing end; null if not a range. */
    private static Long[] parseRange(String spec) {
        int dash = spec.indexOf('-');
        if (dash < 0) return null;
        String a = spec.substring(0, dash).strip();
        String b = spec.substring(dash + 1).strip();
        if (a.isEmpty() && b.isEmpty()) return null;
        try {
            Long from = a.isEmpty() ? null : Long.parseLong(a);
            Long to = b.isEmpty() ? null : Long.parseLong(b);
            if ((from != null && from < 0) || (to != null && to < 0)) return null;
            return new Long[] {from, to};
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private Response put(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        String id = docId(req);
        db.checkWriter(id); // before the body is read
        db.validateDocId(id);
        String name = req.param("att");
        DocumentJson.validateAttachmentName(name); // before the body is read
        String type = req.contentType() == null ? "application/octet-stream" : req.header("Content-Type");
        boolean gzipSent = sentGzipped(req);
        RevId rev = baseRev(req);
        ObjectNode body = currentBody(db.database(), id, rev, null);
        ObjectNode atts = body.has("_attachments") ? (ObjectNode) body.get("_attachments") : body.putObject("_attachments");
        ObjectNode att = atts.putObject(name).put("content_type", type);
        // chttpd_db: a gzip body is stored as it came; its length unknown, the compressed one stands for it.
        if (gzipSent) att.put("encoding", "gzip");
        StoredAttachment stored = db.readAttachment(id, name, att, gzipSent ? req.content().stream() : Bodies.stream(req));
        DocUpdate u = DocUpdate.edit(id, rev, false, body);
        if (stored != null) u = u.withStored(Map.of(name, stored));
        UpdateResult r = write(db, u);
        return Response.json(201, DocSupport.okRow(id, r.rev().toString()))
                .withHeader("ETag", "\"" + r.rev() + "\"")
                .withHeader("Location", DocSupport.location(req, db.name(), id) + "/" + DocSupport.encode(name));
    }

    /** Whether the body comes gzipped ({@code Content-Encoding}); any coding but gzip and identity is 415, as chttpd_db says it. */
    private static boolean sentGzipped(Request req) {
        String enc = req.header("Content-Encoding");
        if (enc == null || enc.strip().equalsIgnoreCase("identity")) return false;
        if (enc.strip().equalsIgnoreCase("gzip")) return true;
        throw HttpError.badContentType("Only gzip and identity content-encodings are supported");
    }

    private Response delete(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        String id = docId(req);
        db.requirePartition(id);
        db.checkWriter(id); // before the body is read
        String name = req.param("att");
        DocumentJson.validateAttachmentName(name);
        RevId rev = baseRev(req);
        if (rev == null) {
            // chttpd_db: the current document must exist and have the attachment (404s); then,
            // without a revision, the edit is a conflict.
            JsonNode current = db.database().get(id, null, false).body().path("_attachments");
            if (current.get(name) == null) throw StorageException.notFound(MISSING);
            throw StorageException.conflict();
        }
        ObjectNode body = currentBody(db.database(), id, rev, name);
        JsonNode atts = body.get("_attachments");
        ((ObjectNode) atts).remove(name);
        if (atts.isEmpty()) body.remove("_attachments");
        UpdateResult r = write(db, DocUpdate.edit(id, rev, false, body));
        return Response.json(200, DocSupport.okRow(id, r.rev().toString())).withHeader("ETag", "\"" + r.rev() + "\"");
    }

    /**
     * An HTML form's upload, as chttpd_db's {@code db_doc_req} POST takes it: the Referer must name
     * this host (couch_httpd:validate_referer, 400), the id must be valid, the body
     * {@code multipart/form-data} (415); a {@code _doc} field is the document as JSON, else
     * {@code _rev} names the revision to edit; each {@code _attachments} file field becomes an
     * attachment named by its filename, typed by its part's Content-Type, replacing one of that
     * name and keeping the others. File parts stream into storage as they arrive. Answered as a
     * PUT is: 201, {@code {ok, id, rev}}, an ETag, {@code application/json}.
     */
    private Response form(Request req) throws Exception {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        String id = docId(req);
        checkReferer(req);
        db.validateDocId(id);
        String ct = req.header("Content-Type");
        if (ct == null || !ct.split(";")[0].equals("multipart/form-data")) throw HttpError.badContentType("Content-Type must be multipart/form-data");
        db.checkWriter(id); // before the body is read
        MultipartStream parts;
        try {
            parts = new MultipartStream(Bodies.stream(req), MultipartStream.boundary(ct));
        } catch (MultipartStream.Malformed e) {
            throw HttpError.badRequest(e.getMessage());
        }
        String formRev = null;
        JsonNode formDoc = null;
        ObjectNode files = Json.NODES.objectNode();
        Map<String, StoredAttachment> stored = new java.util.HashMap<>();
        try {
            for (Map<String, String> h = parts.nextPart(); h != null; h = parts.nextPart()) {
                String disposition = h.getOrDefault("content-disposition", "");
                String field = dispositionParam(disposition, "name");
                String filename = dispositionParam(disposition, "filename");
                if ("_attachments".equals(field) && filename != null) {
                    DocumentJson.validateAttachmentName(filename);
                    ObjectNode meta = files.putObject(filename).put("content_type", h.getOrDefault("content-type", "application/octet-stream"));
                    StoredAttachment st = db.readAttachment(id, filename, meta, parts.content());
                    if (st != null) stored.put(filename, st);
                    else stored.remove(filename);
                } else if ("_rev".equals(field)) {
                    formRev = new String(field(parts), java.nio.charset.StandardCharsets.UTF_8);
                } else if ("_doc".equals(field)) {
                    formDoc = Json.MAPPER.readTree(field(parts));
                }
            }
        } catch (MultipartStream.Malformed e) {
            throw HttpError.badRequest(e.getMessage());
        }
        DocUpdate u;
        if (formDoc != null) {
            DocumentJson.Parsed p = DocumentJson.parse(formDoc, id);
            String rev = DocSupport.requestRev(req, p.rev() == null ? null : p.rev().toString());
            if (rev != null && p.rev() == null) p = p.withRev(RevId.parse(rev));
            u = DocumentJson.toUpdate(p.withBody(withFiles(p.body(), files)), true);
        } else if (formRev != null) {
            RevId rev = RevId.parse(formRev.strip());
            u = DocUpdate.edit(id, rev, false, withFiles(currentBody(db.database(), id, rev, null), files));
        } else {
            // CouchDB fails without either (a 500); the form is what is wrong.
            throw HttpError.badRequest("The form needs a _rev or a _doc field");
        }
        if (!stored.isEmpty()) u = u.withStored(stored);
        UpdateResult r = write(db, u);
        return Response.json(201, DocSupport.okRow(id, r.rev().toString())).withHeader("ETag", "\"" + r.rev() + "\"");
    }

    /** {@code body} with the form's files among its attachments, each replacing one of its name. */
    private static ObjectNode withFiles(ObjectNode body, ObjectNode files) {
        if (files.isEmpty()) return body;
        JsonNode atts = body.get("_attachments");
        if (atts != null && !atts.isObject()) throw StorageException.badRequest("_attachments must be an object");
        (atts == null ? body.putObject("_attachments") : (ObjectNode) atts).setAll(files);
        return body;
    }

    /**
     * The most a form's text field ({@code _rev}, {@code _doc}) may hold: far above any document
     * {@code max_document_size} lets through, so only a body that is no document is refused (413).
     */
    private static final int FORM_FIELD_LIMIT = 64 << 20;

    /** A text field of a form, read whole. */
    private static byte[] field(MultipartStream parts) throws java.io.IOException {
        byte[] b = parts.content().readNBytes(FORM_FIELD_LIMIT + 1);
        if (b.length > FORM_FIELD_LIMIT) throw HttpError.tooLarge();
        return b;
    }

    /** A parameter of a Content-Disposition header ({@code name="x"}), unquoted; null if absent. */
    static String dispositionParam(String header, String param) {
        for (String p : header.split(";")) {
            String t = p.strip();
            int eq = t.indexOf('=');
            if (eq < 0 || !t.substring(0, eq).strip().equalsIgnoreCase(param)) continue;
            String v = t.substring(eq + 1).strip();
            return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
        }
        return null;
    }

    /**
     * couch_httpd:validate_referer: a form post must come from a page of this server: its Referer's
     * host (and port) must be the request's (X-Forwarded-Host, else Host).
     */
    private static void checkReferer(Request req) {
        String referer = req.header("Referer");
        if (referer == null) throw HttpError.badRequest("Referer header required.");
        String host = req.header("X-Forwarded-Host") != null ? req.header("X-Forwarded-Host") : req.header("Host");
        int scheme = referer.indexOf("://");
        String netloc = "";
        if (scheme > 0) {
            String rest = referer.substring(scheme + 3);
            int end = rest.length();
            for (char c : new char[] {'/', '?', '#'}) if (rest.indexOf(c) >= 0) end = Math.min(end, rest.indexOf(c));
            netloc = rest.substring(0, end);
        }
        if (!netloc.equals(host)) throw HttpError.badRequest("Referer header must match host.");
    }

    private static RevId baseRev(Request req) {
        String rev = req.query("rev");
        String ifMatch = req.header("If-Match");
        if (rev == null && ifMatch != null) rev = ifMatch.replace("\"", "").strip();
        return rev == null ? null : RevId.parse(rev);
    }

    /**
     * The body to edit, with every attachment as a stub; a new document if there is no rev. As
     * chttpd_db opens the named revision first: one the document does not know is 409
     * {@code not_found} "missing_rev"; for a deletion ({@code attachment} named), a revision
     * without the attachment is 404 "Document is missing attachment", even an old one. Only
     * leaves keep a body here (RFC A/C), so an old revision has the attachment when a leaf
     * descending from it has it from a position at or before it; otherwise the attachment was
     * never there, or was removed after it, which this cannot tell apart: 404.
     */
    private static ObjectNode currentBody(Database db, String id, RevId rev, String attachment) {
        if (rev == null) return Json.NODES.objectNode(); // creating: a conflict if the doc exists, as a PUT without rev
        StoredDoc d;
        try {
            d = db.get(id, rev, false);
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            boolean[] known = new boolean[1];
            boolean kept = db.read(r -> {
                known[0] = false; // a retried read starts over
                for (RevId leaf : r.leavesFrom(id, rev)) {
                    known[0] = true;
                    JsonNode att = attachment == null ? null : r.get(id, leaf, false).body().path("_attachments").get(attachment);
                    if (att != null && att.path("revpos").asLong(Long.MAX_VALUE) <= rev.pos()) return true;
                }
                return false;
            });
            if (!known[0]) throw new HttpError(409, "not_found", "missing_rev");
            if (attachment != null && !kept) throw StorageException.notFound(MISSING);
            throw StorageException.conflict(); // an edit of an inner revision
        }
        if (attachment != null && d.body().path("_attachments").get(attachment) == null) throw StorageException.notFound(MISSING);
        if (d.deleted()) throw StorageException.conflict();
        ObjectNode body = d.body().deepCopy();
        JsonNode atts = body.get("_attachments");
        if (atts != null) {
            for (JsonNode m : atts) {
                ObjectNode o = (ObjectNode) m;
                o.removeAll();
                o.put("stub", true);
            }
        }
        return body;
    }

    private static UpdateResult write(SecuredDb db, DocUpdate u) {
        UpdateResult r = db.update(List.of(u), true).getFirst();
        if (!r.ok()) throw r.error();
        return r;
    }
}
