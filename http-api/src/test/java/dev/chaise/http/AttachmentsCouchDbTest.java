package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Attachments as CouchDB 3.5.0 answers them, from its Elixir suite (attachments_test.exs,
 * attachments_multipart_test.exs, attachment_ranges_test.exs) and a side-by-side: each behaviour
 * pinned to status, headers and body, with the CouchDB source that decides it.
 */
class AttachmentsCouchDbTest {
    static HttpTestServer s;
    static final String TEXT = "This is a text attachment that compresses well. ".repeat(40);

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/a", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpResponse<byte[]> bytes(String method, String path, byte[] body, String... headers) throws Exception {
        var b = HttpRequest.newBuilder(URI.create(s.base + path)).header("Authorization", HttpTestServer.ADMIN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return s.client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static byte[] gunzip(byte[] gz) throws Exception {
        try (var in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    static byte[] gzip(byte[] b) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (var gz = new GZIPOutputStream(out)) {
            gz.write(b);
        }
        return out.toByteArray();
    }

    static String md5(byte[] b) throws Exception {
        return "md5-" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(b));
    }

    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    /**
     * couch_db:with_stream gzips a compressible type ([attachments] compressible_types, default
     * text/*) and keeps the stored bytes' md5 as the digest; couch_att:to_json shows {@code length}
     * (identity) always, {@code encoding}/{@code encoded_length} only for att_encoding_info;
     * chttpd_db serves the stored gzip with Content-Encoding only to a client that accepts it.
     */
    @Test
    void compressibleTypesAreStoredGzipped() throws Exception {
        s.send("PUT", "/a/gz/t.txt", TEXT, "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").status(201);
        HttpResponse<byte[]> asStored = bytes("GET", "/a/gz/t.txt", null, "Accept-Encoding", "gzip");
        assertEquals(200, asStored.statusCode());
        assertEquals("gzip", header(asStored, "Content-Encoding"));
        assertEquals("none", header(asStored, "Accept-Ranges"));
        assertEquals("text/plain", header(asStored, "Content-Type"));
        assertEquals(TEXT, new String(gunzip(asStored.body()), StandardCharsets.UTF_8));
        byte[] stored = asStored.body();
        assertTrue(stored.length < TEXT.length() / 4, "compressed");

        JsonNode stub = s.asAdmin("GET", "/a/gz", null).status(200).json().at("/_attachments/t.txt");
        assertEquals("{\"content_type\":\"text/plain\",\"digest\":\"" + md5(stored) + "\",\"length\":" + TEXT.length() + ",\"revpos\":1,\"stub\":true}",
                stub.toString());
        JsonNode info = s.asAdmin("GET", "/a/gz?att_encoding_info=true", null).status(200).json().at("/_attachments/t.txt");
        assertEquals("gzip", info.get("encoding").asText());
        assertEquals(stored.length, info.get("encoded_length").asInt());
        assertEquals(TEXT.length(), info.get("length").asInt());

        HttpResponse<byte[]> plain = bytes("GET", "/a/gz/t.txt", null);
        assertEquals(200, plain.statusCode());
        assertNull(header(plain, "Content-Encoding"));
        assertEquals("none", header(plain, "Accept-Ranges"));
        assertEquals("\"" + md5(stored).substring(4) + "\"", header(plain, "ETag"));
        assertEquals(TEXT, new String(plain.body(), StandardCharsets.UTF_8));
        assertEquals(String.valueOf(TEXT.length()), header(bytes("HEAD", "/a/gz/t.txt", null), "Content-Length"));
        assertEquals(String.valueOf(stored.length), header(bytes("HEAD", "/a/gz/t.txt", null, "Accept-Encoding", "gzip;q=1, identity"), "Content-Length"));
        assertNull(header(bytes("GET", "/a/gz/t.txt", null, "Accept-Encoding", "gzip;q=0"), "Content-Encoding"));
        assertNull(header(bytes("GET", "/a/gz/t.txt", null, "Accept-Encoding", "*, gzip;q=0"), "Content-Encoding"));
        assertEquals("gzip", header(bytes("GET", "/a/gz/t.txt", null, "Accept-Encoding", "deflate, *"), "Content-Encoding"));

        // attachments=true inlines the identity bytes.
        JsonNode inline = s.send("GET", "/a/gz?attachments=true", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json")
                .status(200).json().at("/_attachments/t.txt");
        assertEquals(TEXT, new String(Base64.getDecoder().decode(inline.get("data").asText()), StandardCharsets.UTF_8));
        // Not a compressible type: stored as sent, no encoding.
        s.send("PUT", "/a/raw/b.bin", TEXT, "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/octet-stream").status(201);
        JsonNode raw = s.asAdmin("GET", "/a/raw?att_encoding_info=true", null).json().at("/_attachments/b.bin");
        assertFalse(raw.has("encoding"));
        assertEquals(md5(TEXT.getBytes(StandardCharsets.UTF_8)), raw.get("digest").asText());
        HttpResponse<byte[]> rawGet = bytes("GET", "/a/raw/b.bin", null, "Accept-Encoding", "gzip");
        assertNull(header(rawGet, "Content-Encoding"));
        assertEquals("bytes", header(rawGet, "Accept-Ranges"));
    }

    /**
     * chttpd_db:db_attachment_req: a Range on a gzip-stored attachment is served whole (200), but
     * parse_ranges still throws requested_range_not_satisfiable (416, chttpd's JSON error) for a
     * range that ends before it starts once clipped to the length.
     */
    @Test
    void rangesOnGzipAreWholeAndUnsatisfiableRangesAre416Json() throws Exception {
        s.send("PUT", "/a/rg/t.txt", TEXT, "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").status(201);
        var whole = s.send("GET", "/a/rg/t.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=0-9").status(200);
        assertEquals(TEXT, whole.text());
        assertNull(whole.header("Content-Range"));
        s.send("GET", "/a/rg/t.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=5-2")
                .error(416, "requested_range_not_satisfiable", "Requested range not satisfiable");
        s.send("PUT", "/a/rg2/b.bin", "0123456789", "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/octet-stream").status(201);
        var past = s.send("GET", "/a/rg2/b.bin", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=100-200")
                .error(416, "requested_range_not_satisfiable", "Requested range not satisfiable");
        assertEquals("application/json", past.header("Content-Type"));
        s.send("GET", "/a/rg2/b.bin", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=5-2")
                .error(416, "requested_range_not_satisfiable", "Requested range not satisfiable");
        var clipped = s.send("GET", "/a/rg2/b.bin", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=8-20").status(206);
        assertEquals("89", clipped.text());
        assertEquals("bytes 8-9/10", clipped.header("Content-Range"));
        // mochiweb cannot parse it: no range at all.
        assertEquals("0123456789", s.send("GET", "/a/rg2/b.bin", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=x-y").status(200).text());
    }

    /** chttpd_db: a DELETE checks the attachment in the revision it names (get_existing_attachment), old or not. */
    @Test
    void deletingAnAttachmentTheRevisionLacksIs404() throws Exception {
        String rev1 = s.asAdmin("PUT", "/a/del", "{}").status(201).json().get("rev").asText();
        String rev2 = s.send("PUT", "/a/del/x.bin?rev=" + rev1, "x", "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/octet-stream")
                .status(201).json().get("rev").asText();
        s.asAdmin("DELETE", "/a/del/x.bin?rev=" + rev1, null).error(404, "not_found", "Document is missing attachment");
        s.asAdmin("DELETE", "/a/del/nope.bin?rev=" + rev2, null).error(404, "not_found", "Document is missing attachment");
        s.asAdmin("DELETE", "/a/del/x.bin?rev=4-garbage", null).error(409, "not_found", "missing_rev");
        var ok = s.asAdmin("DELETE", "/a/del/x.bin?rev=" + rev2, null).status(200);
        assertNull(ok.header("Location"));
    }

    /** chttpd_db: a standalone PUT without Content-Type is application/octet-stream (not compressed); a type sent is kept as sent. */
    @Test
    void aTypelessUploadIsOctetStream() throws Exception {
        s.send("PUT", "/a/typeless/f", "some text", "Authorization", HttpTestServer.ADMIN).status(201);
        JsonNode stub = s.asAdmin("GET", "/a/typeless?att_encoding_info=true", null).json().at("/_attachments/f");
        assertEquals("application/octet-stream", stub.get("content_type").asText());
        assertFalse(stub.has("encoding"));
        assertEquals("application/octet-stream", s.send("GET", "/a/typeless/f", null, "Authorization", HttpTestServer.ADMIN).header("Content-Type"));
        String rev = s.asAdmin("GET", "/a/typeless", null).json().get("_rev").asText();
        s.send("PUT", "/a/typeless/g?rev=" + rev, "more", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain;charset=utf-8").status(201);
        var g = s.send("GET", "/a/typeless/g", null, "Authorization", HttpTestServer.ADMIN).status(200);
        assertEquals("text/plain;charset=utf-8", g.header("Content-Type"));
        assertEquals("more", g.text());
    }

    /** COUCHDB-809: a stub needs only "stub": true; a stub whose revpos the previous revision does not have is 412 missing_stub. */
    @Test
    void aBareStubKeepsTheAttachment() throws Exception {
        String rev1 = s.asAdmin("PUT", "/a/stub_doc", "{\"_attachments\":{\"foo.txt\":{\"content_type\":\"text/plain\",\"data\":\"VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=\"}}}")
                .status(201).json().get("rev").asText();
        String rev2 = s.asAdmin("PUT", "/a/stub_doc", "{\"_rev\":\"" + rev1 + "\",\"_attachments\":{\"foo.txt\":{\"stub\":true}}}").status(201).json().get("rev").asText();
        assertEquals("This is a base64 encoded text", s.send("GET", "/a/stub_doc/foo.txt", null, "Authorization", HttpTestServer.ADMIN).status(200).text());
        s.asAdmin("PUT", "/a/stub_doc", "{\"_rev\":\"" + rev2 + "\",\"_attachments\":{\"foo.txt\":{\"stub\":true,\"revpos\":10}}}")
                .error(412, "missing_stub", "Invalid attachment stub in stub_doc for foo.txt");
        s.asAdmin("PUT", "/a/stub_doc", "{\"_rev\":\"" + rev2 + "\",\"_attachments\":{\"bar.txt\":{\"stub\":true}}}")
                .error(412, "missing_stub", "Invalid attachment stub in stub_doc for bar.txt");
    }

    /**
     * attachments_multipart_test.exs: a multipart/related PUT stores a text part gzipped (only it
     * shows encoding with att_encoding_info); COUCHDB-1923: a part the JSON marks
     * {@code "encoding": "gzip"} (with the identity length and encoded_length) is stored as it came;
     * a multipart open_revs sends it back as stored, with Content-Encoding (couch_doc:doc_to_multi_part_stream).
     */
    @Test
    void multipartPartsInAndOutKeepTheirEncoding() throws Exception {
        String doc = "{\"body\":\"b\",\"_attachments\":{"
                + "\"foo.txt\":{\"follows\":true,\"content_type\":\"application/test\",\"length\":21},"
                + "\"baz.txt\":{\"follows\":true,\"content_type\":\"text/plain\",\"length\":19}}}";
        String mp = "--abc123\r\ncontent-type: application/json\r\n\r\n" + doc + "\r\n--abc123\r\n\r\nthis is 21 chars long\r\n--abc123\r\n\r\nthis is 19 chars lo\r\n--abc123--epilogue";
        s.send("PUT", "/a/multipart", mp, "Authorization", HttpTestServer.ADMIN, "Content-Type", "multipart/related;boundary=\"abc123\"").status(201);
        JsonNode atts = s.asAdmin("GET", "/a/multipart?att_encoding_info=true", null).json().get("_attachments");
        assertFalse(atts.get("foo.txt").has("encoding"));
        assertEquals("gzip", atts.get("baz.txt").get("encoding").asText());
        assertEquals("this is 19 chars lo", s.send("GET", "/a/multipart/baz.txt", null, "Authorization", HttpTestServer.ADMIN).text());

        byte[] identity = TEXT.getBytes(StandardCharsets.UTF_8);
        byte[] gz = gzip(identity);
        String json = "{\"_attachments\":{\"t.txt\":{\"follows\":true,\"content_type\":\"text/plain\",\"length\":" + identity.length
                + ",\"encoding\":\"gzip\",\"encoded_length\":" + gz.length + "}}}";
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(("--b\r\nContent-Type: application/json\r\n\r\n" + json + "\r\n--b\r\nContent-Type: text/plain\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        body.writeBytes(gz);
        body.writeBytes("\r\n--b--".getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> put = bytes("PUT", "/a/encsent", body.toByteArray(), "Content-Type", "multipart/related; boundary=\"b\"");
        assertEquals(201, put.statusCode(), new String(put.body()));
        JsonNode info = s.asAdmin("GET", "/a/encsent?att_encoding_info=true", null).json().at("/_attachments/t.txt");
        assertEquals(md5(gz), info.get("digest").asText());
        assertEquals(identity.length, info.get("length").asInt());
        assertEquals(gz.length, info.get("encoded_length").asInt());
        assertArrayEquals(identity, bytes("GET", "/a/encsent/t.txt", null).body());

        HttpResponse<byte[]> open = bytes("GET", "/a/encsent?open_revs=all&attachments=true", null, "Accept", "multipart/mixed");
        assertEquals(200, open.statusCode());
        String text = new String(open.body(), StandardCharsets.ISO_8859_1);
        assertTrue(text.contains("\"encoding\":\"gzip\""), text);
        assertTrue(text.contains("\r\nContent-Length: " + gz.length + "\r\nContent-Encoding: gzip\r\n\r\n"), text);
        assertTrue(text.contains(new String(gz, StandardCharsets.ISO_8859_1)), "the part is the stored gzip");
    }

    /** The replicator carries gzip-stored attachments whole: a copy reads back the same text. */
    @Test
    void replicationCarriesGzippedAttachments() throws Exception {
        s.send("PUT", "/a/rep/t.txt", TEXT, "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").status(201);
        String remote = "http://admin:pass@127.0.0.1:" + s.http.port() + "/";
        for (String target : new String[] {"copy_local", remote + "copy_remote"}) {
            JsonNode r = s.asAdmin("POST", "/_replicate", "{\"source\":\"a\",\"target\":\"" + target + "\",\"create_target\":true,\"doc_ids\":[\"rep\"]}")
                    .status(200).json();
            assertTrue(r.get("ok").asBoolean(), r.toString());
            String db = target.startsWith("http") ? "copy_remote" : "copy_local";
            assertEquals(TEXT, s.send("GET", "/" + db + "/rep/t.txt", null, "Authorization", HttpTestServer.ADMIN).status(200).text());
            assertEquals("gzip", s.asAdmin("GET", "/" + db + "/rep?att_encoding_info=true", null).json().at("/_attachments/t.txt/encoding").asText());
        }
        JsonNode back = s.asAdmin("POST", "/_replicate", "{\"source\":\"" + remote + "copy_remote\",\"target\":\"copy_back\",\"create_target\":true}")
                .status(200).json();
        assertTrue(back.get("ok").asBoolean(), back.toString());
        assertEquals(TEXT, s.send("GET", "/copy_back/rep/t.txt", null, "Authorization", HttpTestServer.ADMIN).status(200).text());
    }

    /**
     * attachments_test.exs "attachment via multipart/form-data": chttpd_db's db_doc_req POST takes
     * an HTML form (couch_httpd:validate_referer, validate_ctype, parse_form): _rev names the
     * revision, each _attachments file field is an attachment named by its filename; the answer is
     * a PUT's (201, ETag), as application/json (couch_httpd:negotiate_content_type).
     */
    @Test
    void htmlFormUploads() throws Exception {
        String rev = s.asAdmin("PUT", "/a/form_data_doc", "{\"_id\":\"form-data-doc\",\"keep\":1}").status(201).json().get("rev").asText();
        String body = "------TF\r\nContent-Disposition: form-data; name=\"_rev\"\r\n\r\n" + rev + "\r\n"
                + "------TF\r\nContent-Disposition: form-data; name=\"_attachments\"; filename=\"file.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                + "contents of file.txt\r\n\r\n------TF--";
        String form = "multipart/form-data; boundary=----TF";
        s.send("POST", "/a/form_data_doc", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", form)
                .error(400, "bad_request", "Referer header required.");
        s.send("POST", "/a/form_data_doc", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", form, "Referer", "http://elsewhere:5984/")
                .error(400, "bad_request", "Referer header must match host.");
        s.send("POST", "/a/form_data_doc", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/json", "Referer", s.base + "/_utils")
                .error(415, "bad_content_type", "Content-Type must be multipart/form-data");
        s.send("POST", "/a/_nope", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", form, "Referer", s.base + "/")
                .error(400, "illegal_docid", null);
        var ok = s.send("POST", "/a/form_data_doc", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", form, "Referer", s.base + "/_utils");
        ok.status(201);
        assertEquals("application/json", ok.header("Content-Type"));
        String rev2 = ok.json().get("rev").asText();
        assertEquals("{\"ok\":true,\"id\":\"form_data_doc\",\"rev\":\"" + rev2 + "\"}", ok.json().toString());
        assertEquals("\"" + rev2 + "\"", ok.header("ETag"));
        JsonNode doc = s.asAdmin("GET", "/a/form_data_doc", null).status(200).json();
        assertEquals(22, doc.at("/_attachments/file.txt/length").asInt());
        assertEquals("text/plain", doc.at("/_attachments/file.txt/content_type").asText());
        assertEquals(1, doc.get("keep").asInt(), "the revision's body is kept");
        assertEquals("contents of file.txt\r\n", s.send("GET", "/a/form_data_doc/file.txt", null, "Authorization", HttpTestServer.ADMIN).status(200).text());
        // A stale _rev is a conflict; an unknown one is fabric's missing_rev.
        s.send("POST", "/a/form_data_doc", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", form, "Referer", s.base + "/")
                .error(409, "conflict", "Document update conflict.");

        // A _doc field is the whole document; a file of several megabytes streams into storage.
        byte[] big = new byte[3 << 20];
        new java.util.Random(5).nextBytes(big);
        ByteArrayOutputStream b2 = new ByteArrayOutputStream();
        b2.writeBytes(("--X\r\nContent-Disposition: form-data; name=\"_attachments\"; filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                .getBytes(StandardCharsets.UTF_8));
        b2.writeBytes(big);
        b2.writeBytes("\r\n--X\r\nContent-Disposition: form-data; name=\"_doc\"\r\n\r\n{\"v\":2}\r\n--X--\r\n".getBytes(StandardCharsets.UTF_8));
        HttpResponse<byte[]> created = bytes("POST", "/a/formdoc", b2.toByteArray(), "Content-Type", "multipart/form-data; boundary=X", "Referer", s.base + "/");
        assertEquals(201, created.statusCode(), new String(created.body()));
        JsonNode made = s.asAdmin("GET", "/a/formdoc", null).json();
        assertEquals(2, made.get("v").asInt());
        assertEquals(big.length, made.at("/_attachments/big.bin/length").asInt());
        assertArrayEquals(big, bytes("GET", "/a/formdoc/big.bin", null).body());
    }

    /**
     * chttpd_db: a standalone PUT with {@code Content-Encoding: gzip} is stored as it came
     * (couch_db:with_stream's gzip case: both lengths the compressed one); GET decodes it for a
     * client that does not take gzip. Any other coding is 415.
     */
    @Test
    void aGzipUploadIsStoredAsItCame() throws Exception {
        byte[] identity = TEXT.getBytes(StandardCharsets.UTF_8);
        byte[] gz = gzip(identity);
        HttpResponse<byte[]> put = bytes("PUT", "/a/gzput/t.bin", gz, "Content-Type", "application/octet-stream", "Content-Encoding", "gzip");
        assertEquals(201, put.statusCode(), new String(put.body()));
        JsonNode info = s.asAdmin("GET", "/a/gzput?att_encoding_info=true", null).json().at("/_attachments/t.bin");
        assertEquals("gzip", info.get("encoding").asText());
        assertEquals(gz.length, info.get("length").asInt());
        assertEquals(gz.length, info.get("encoded_length").asInt());
        assertEquals(md5(gz), info.get("digest").asText());
        assertArrayEquals(identity, bytes("GET", "/a/gzput/t.bin", null).body());
        assertArrayEquals(gz, bytes("GET", "/a/gzput/t.bin", null, "Accept-Encoding", "gzip").body());
        // Not gzip at all: refused when it arrives, where CouchDB stores it and fails each read.
        s.send("PUT", "/a/gzput2/t.bin", "not gzip", "Authorization", HttpTestServer.ADMIN, "Content-Encoding", "gzip")
                .error(400, "bad_request", "Attachment t.bin is not valid gzip");
        s.send("PUT", "/a/gzput2/t.bin", "x", "Authorization", HttpTestServer.ADMIN, "Content-Encoding", "br")
                .error(415, "bad_content_type", "Only gzip and identity content-encodings are supported");
    }

    /** attachment_paths_test.exs: names with slashes, %2F in a path, a database name with a slash; length is the identity length of a gzipped text. */
    @Test
    void attachmentPaths() throws Exception {
        s.asAdmin("PUT", "/paths%2Fwith_slashes", null).status(201);
        String rev = s.asAdmin("POST", "/paths%2Fwith_slashes", "{\"_id\":\"bin_doc\",\"_attachments\":{"
                + "\"foo/bar.txt\":{\"content_type\":\"text/plain\",\"data\":\"VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=\"},"
                + "\"foo%2Fbaz.txt\":{\"content_type\":\"text/plain\",\"data\":\"V2UgbGlrZSBwZXJjZW50IHR3byBGLg==\"}}}").status(201).json().get("rev").asText();
        for (String path : new String[] {"foo/bar.txt", "foo%2Fbar.txt"}) {
            var r = s.send("GET", "/paths%2Fwith_slashes/bin_doc/" + path, null, "Authorization", HttpTestServer.ADMIN).status(200);
            assertEquals("This is a base64 encoded text", r.text());
            assertEquals("text/plain", r.header("Content-Type"));
        }
        s.send("GET", "/paths%2Fwith_slashes/bin_doc/foo/baz.txt", null, "Authorization", HttpTestServer.ADMIN).status(404);
        assertEquals("We like percent two F.", s.send("GET", "/paths%2Fwith_slashes/bin_doc/foo%252Fbaz.txt", null, "Authorization", HttpTestServer.ADMIN).status(200).text());
        s.send("PUT", "/paths%2Fwith_slashes/bin_doc/foo/attachment.txt", "Just some text", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain;charset=utf-8")
                .error(409, "conflict", null);
        s.send("PUT", "/paths%2Fwith_slashes/bin_doc/foo/bar2.txt?rev=" + rev, "This is no base64 encoded text", "Authorization", HttpTestServer.ADMIN,
                "Content-Type", "text/plain;charset=utf-8").status(201);
        JsonNode att = s.asAdmin("GET", "/paths%2Fwith_slashes/bin_doc", null).status(200).json().get("_attachments");
        assertTrue(att.has("foo/bar.txt") && att.has("foo%2Fbaz.txt"));
        assertEquals("text/plain;charset=utf-8", att.at("/foo~1bar2.txt/content_type").asText());
        assertEquals(30, att.at("/foo~1bar2.txt/length").asInt());
    }
}
