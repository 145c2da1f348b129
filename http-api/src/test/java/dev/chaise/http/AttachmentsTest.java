package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Attachments over HTTP: inline, standalone, stubs, ranges, ETags and their errors. */
class AttachmentsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/a", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static String b64(String x) {
        return Base64.getEncoder().encodeToString(x.getBytes());
    }

    @Test
    void inlineAttachmentsAndStubs() throws Exception {
        String rev1 = s.asAdmin("PUT", "/a/doc", "{\"v\":1,\"_attachments\":{\"hello.txt\":{\"content_type\":\"text/plain\",\"data\":\"" + b64("hello world") + "\"}}}")
                .status(201).json().get("rev").asText();
        JsonNode meta = s.asAdmin("GET", "/a/doc", null).status(200).json().get("_attachments").get("hello.txt");
        assertEquals("{\"content_type\":\"text/plain\",\"digest\":\"md5-7mkg+nM0HN26sZkLN8KVSA==\",\"length\":11,\"revpos\":1,\"stub\":true}", meta.toString());
        JsonNode inline = s.send("GET", "/a/doc?attachments=true", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json").status(200).json().get("_attachments").get("hello.txt");
        assertEquals(b64("hello world"), inline.get("data").asText());
        assertTrue(!inline.has("length") && !inline.has("stub"), "inline attachments carry data, not length or stub, as in CouchDB");
        String rev2 = s.asAdmin("PUT", "/a/doc", "{\"_rev\":\"" + rev1 + "\",\"v\":2,\"_attachments\":{\"hello.txt\":{\"stub\":true}}}").status(201).json().get("rev").asText();
        assertEquals(1, s.asAdmin("GET", "/a/doc", null).json().get("_attachments").get("hello.txt").get("revpos").asInt());
        assertTrue(s.send("GET", "/a/doc?atts_since=%5B%22" + rev1 + "%22%5D", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json").json().get("_attachments").get("hello.txt").has("stub"),
                "not newer than rev 1: stays a stub");
        s.asAdmin("PUT", "/a/doc", "{\"_rev\":\"" + rev2 + "\",\"_attachments\":{\"nope\":{\"stub\":true}}}")
                .error(412, "missing_stub", "Invalid attachment stub in doc for nope");
        s.asAdmin("PUT", "/a/bad", "{\"_attachments\":{\"x\":{\"data\":\"***\"}}}").error(400, "bad_request", "Invalid attachment data for x");
        s.asAdmin("PUT", "/a/bad", "{\"_attachments\":{\"_x\":{\"data\":\"\"}}}").error(400, "bad_request", null);
        s.asAdmin("PUT", "/a/_local/l", "{\"_attachments\":{\"x\":{\"data\":\"aGk=\"}}}").status(201);
        assertTrue(!s.asAdmin("GET", "/a/_local/l", null).json().has("_attachments"), "a _local document keeps no attachments, as in CouchDB");
        // _all_docs and _changes with include_docs carry bodies when asked.
        JsonNode all = s.asAdmin("GET", "/a/_all_docs?include_docs=true&attachments=true&key=%22doc%22", null).status(200).json();
        assertEquals(b64("hello world"), all.at("/rows/0/doc/_attachments/hello.txt/data").asText());
        JsonNode changes = s.asAdmin("GET", "/a/_changes?include_docs=true&attachments=true&doc_ids=%5B%22doc%22%5D&filter=_doc_ids", null).status(200).json();
        assertEquals(b64("hello world"), changes.at("/results/0/doc/_attachments/hello.txt/data").asText());
        assertTrue(s.asAdmin("GET", "/a/_all_docs?include_docs=true&key=%22doc%22", null).json().at("/rows/0/doc/_attachments/hello.txt/stub").asBoolean());
        s.asAdmin("PUT", "/a/_design/av", "{\"views\":{\"v\":{\"map\":\"function(doc){ if (doc._attachments) emit(doc._id); }\"}}}").status(201);
        JsonNode view = s.asAdmin("GET", "/a/_design/av/_view/v?include_docs=true&attachments=true&key=%22doc%22", null).status(200).json();
        assertEquals(b64("hello world"), view.at("/rows/0/doc/_attachments/hello.txt/data").asText());
        // The replicator's reads: _bulk_get and open_revs with attachments=true carry the bodies.
        JsonNode bulk = s.asAdmin("POST", "/a/_bulk_get?attachments=true", "{\"docs\":[{\"id\":\"doc\"}]}").status(200).json();
        assertEquals(b64("hello world"), bulk.at("/results/0/docs/0/ok/_attachments/hello.txt/data").asText());
        JsonNode since = s.asAdmin("POST", "/a/_bulk_get", "{\"docs\":[{\"id\":\"doc\",\"atts_since\":[\"" + rev1 + "\"]}]}").status(200).json();
        assertTrue(since.at("/results/0/docs/0/ok/_attachments/hello.txt/stub").asBoolean());
        JsonNode open = s.send("GET", "/a/doc?open_revs=all&attachments=true", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json")
                .status(200).json();
        assertEquals(b64("hello world"), open.at("/0/ok/_attachments/hello.txt/data").asText());
    }

    /** For the CouchDB replicator: documents with attachment data become multipart/related parts, attachments as raw parts. */
    @Test
    void multipartResponsesCarryAttachmentsAsParts() throws Exception {
        byte[] bin = new byte[256];
        for (int i = 0; i < bin.length; i++) bin[i] = (byte) i;
        String rev = s.asAdmin("PUT", "/a/mpout", "{\"v\":1,\"_attachments\":{\"bin.dat\":{\"content_type\":\"application/octet-stream\",\"data\":\""
                + Base64.getEncoder().encodeToString(bin) + "\"},\"t.txt\":{\"content_type\":\"text/plain\",\"data\":\"" + b64("hi") + "\"}}}")
                .status(201).json().get("rev").asText();
        for (String[] req : new String[][] {{"GET", "/a/mpout?open_revs=all&attachments=true", null}, {"POST", "/a/_bulk_get?attachments=true", "{\"docs\":[{\"id\":\"mpout\"}]}"}}) {
            var b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.base + req[1])).header("Authorization", HttpTestServer.ADMIN)
                    .header("Accept", "multipart/mixed").header("Content-Type", "application/json")
                    .method(req[0], req[2] == null ? java.net.http.HttpRequest.BodyPublishers.noBody() : java.net.http.HttpRequest.BodyPublishers.ofString(req[2]));
            var r = s.client.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(200, r.statusCode());
            String ct = r.headers().firstValue("Content-Type").orElseThrow();
            assertTrue(ct.startsWith("multipart/mixed; boundary=\""), ct);
            String body = new String(r.body(), java.nio.charset.StandardCharsets.ISO_8859_1); // one char per byte
            String outer = ct.substring(ct.indexOf('"') + 1, ct.lastIndexOf('"'));
            List<String> docParts = parts(body, outer);
            assertEquals(1, docParts.size(), body);
            String doc = docParts.getFirst();
            int h = doc.indexOf("\r\n\r\n");
            String headers = doc.substring(0, h);
            assertTrue(headers.contains("Content-Type: multipart/related; boundary=\""), headers);
            if (req[0].equals("POST")) assertTrue(headers.contains("X-Doc-Id: mpout") && headers.contains("X-Rev-Id: " + rev), headers);
            String inner = headers.substring(headers.indexOf("boundary=\"") + 10, headers.lastIndexOf('"'));
            List<String> inParts = parts(doc.substring(h + 4), inner);
            assertEquals(3, inParts.size(), "the JSON, then one part per attachment");
            JsonNode json = Json.MAPPER.readTree(inParts.get(0).substring(inParts.get(0).indexOf("\r\n\r\n") + 4));
            assertEquals(rev, json.get("_rev").asText());
            JsonNode meta = json.get("_attachments").get("bin.dat");
            assertTrue(meta.get("follows").asBoolean() && !meta.has("data") && meta.get("length").asInt() == 256, meta.toString());
            // Parts follow the JSON's attachment order.
            List<String> names = new java.util.ArrayList<>();
            json.get("_attachments").fieldNames().forEachRemaining(names::add);
            for (int i = 0; i < 2; i++) {
                String part = inParts.get(i + 1);
                String partHeaders = part.substring(0, part.indexOf("\r\n\r\n"));
                String data = part.substring(part.indexOf("\r\n\r\n") + 4);
                assertTrue(partHeaders.contains("filename=\"" + names.get(i) + "\""), partHeaders);
                String expected = names.get(i).equals("bin.dat") ? new String(bin, java.nio.charset.StandardCharsets.ISO_8859_1) : "hi";
                if (names.get(i).equals("t.txt") && req[0].equals("GET")) {
                    // open_revs sends a body as stored: text/plain is stored gzipped (couch_doc:doc_to_multi_part_stream)
                    assertTrue(partHeaders.contains("Content-Encoding: gzip"), partHeaders);
                    assertEquals("gzip", json.at("/_attachments/t.txt/encoding").asText());
                    try (var gz = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(data.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)))) {
                        assertEquals(expected, new String(gz.readAllBytes()));
                    }
                    assertTrue(partHeaders.contains("Content-Length: " + data.length()), partHeaders);
                    continue;
                }
                assertEquals(expected, data, "the attachment's raw bytes");
                assertTrue(partHeaders.contains("Content-Length: " + expected.length()), partHeaders);
            }
        }
    }

    /** The bodies of a multipart body's parts (headers included), between its boundaries. */
    static List<String> parts(String body, String boundary) {
        List<String> out = new java.util.ArrayList<>();
        String delim = "--" + boundary;
        int i = body.indexOf(delim);
        while (i >= 0) {
            int start = i + delim.length();
            if (body.startsWith("--", start)) break; // the closing delimiter
            int next = body.indexOf("\r\n" + delim, start);
            if (next < 0) break;
            out.add(body.substring(start + 2, next)); // skip the CRLF after the delimiter
            i = next + 2;
        }
        return out;
    }

    @Test
    void multipartRelatedAsTheReplicatorSendsIt() throws Exception {
        String body = "--abc\r\nContent-Type: application/json\r\n\r\n"
                + "{\"_id\":\"mp\",\"_rev\":\"2-0123456789abcdef0123456789abcdef\",\"_revisions\":{\"start\":2,\"ids\":[\"0123456789abcdef0123456789abcdef\",\"aaaa\"]},"
                + "\"v\":1,\"_attachments\":{\"one.txt\":{\"content_type\":\"text/plain\",\"revpos\":1,\"digest\":\"md5-x\",\"length\":3,\"follows\":true},"
                + "\"two.bin\":{\"content_type\":\"application/octet-stream\",\"revpos\":2,\"length\":4,\"follows\":true}}}"
                + "\r\n--abc\r\nContent-Disposition: attachment; filename=\"one.txt\"\r\n\r\none\r\n--abc\r\n\r\ntwo!\r\n--abc--";
        s.send("PUT", "/a/mp?new_edits=false", body, "Authorization", HttpTestServer.ADMIN, "Content-Type", "multipart/related; boundary=\"abc\"").status(201);
        JsonNode doc = s.send("GET", "/a/mp?attachments=true", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json").status(200).json();
        assertEquals("2-0123456789abcdef0123456789abcdef", doc.get("_rev").asText());
        assertEquals(b64("one"), doc.at("/_attachments/one.txt/data").asText());
        assertEquals(1, doc.at("/_attachments/one.txt/revpos").asInt(), "a replicated write keeps revpos");
        assertEquals(b64("two!"), doc.at("/_attachments/two.bin/data").asText());
        s.send("PUT", "/a/mp2", "--abc\r\n\r\n{\"_attachments\":{\"x\":{\"follows\":true}}}\r\n--abc--", "Authorization", HttpTestServer.ADMIN,
                "Content-Type", "multipart/related; boundary=abc").error(400, "bad_request", "Missing the body of attachment x.");
    }

    @Test
    void standaloneAttachments() throws Exception {
        var put = s.send("PUT", "/a/sa/dir/file.txt", "0123456789", "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/x-text").status(201);
        String rev1 = put.json().get("rev").asText();
        var get = s.send("GET", "/a/sa/dir/file.txt", null, "Authorization", HttpTestServer.ADMIN).status(200);
        assertEquals("0123456789", get.text());
        assertEquals("application/x-text", get.headers().firstValue("Content-Type").orElseThrow());
        String etag = get.headers().firstValue("ETag").orElseThrow();
        s.send("GET", "/a/sa/dir/file.txt", null, "Authorization", HttpTestServer.ADMIN, "If-None-Match", etag).status(304);
        var part = s.send("GET", "/a/sa/dir/file.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=2-4").status(206);
        assertEquals("234", part.text());
        assertEquals("bytes 2-4/10", part.headers().firstValue("Content-Range").orElseThrow());
        assertEquals("789", s.send("GET", "/a/sa/dir/file.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=-3").status(206).text());
        s.send("GET", "/a/sa/dir/file.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=20-30").status(416);
        // A second attachment keeps the first as a stub.
        String rev2 = s.send("PUT", "/a/sa/b.bin?rev=" + rev1, "xyz", "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/octet-stream")
                .status(201).json().get("rev").asText();
        assertEquals(2, s.asAdmin("GET", "/a/sa", null).json().get("_attachments").size());
        s.send("PUT", "/a/sa/c.bin?rev=" + rev1, "x", "Authorization", HttpTestServer.ADMIN).error(409, "conflict", null);
        s.asAdmin("GET", "/a/sa/missing.txt", null).error(404, "not_found", "Document is missing attachment");
        s.asAdmin("DELETE", "/a/sa/dir/file.txt", null).error(409, "conflict", null);
        s.asAdmin("DELETE", "/a/sa/dir/file.txt?rev=" + rev2, null).status(200);
        assertEquals("[\"b.bin\"]", s.asAdmin("GET", "/a/sa", null).json().get("_attachments").properties().stream()
                .map(e -> "\"" + e.getKey() + "\"").toList().toString());
        s.get("/a/sa/b.bin").error(401, "unauthorized", null);
        s.asAdmin("POST", "/a/_compact", "{}").status(202);
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    static String md5(byte[] b) throws Exception {
        return "md5-" + Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("MD5").digest(b));
    }

    java.net.http.HttpResponse<byte[]> sendBytes(String method, String path, java.net.http.HttpRequest.BodyPublisher body, String... headers) throws Exception {
        var b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.base + path)).method(method, body).header("Authorization", HttpTestServer.ADMIN);
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        return s.client.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());
    }

    /** 20 MB is twice FDB's transaction limit (which the embedded engine enforces): it only gets in streamed, a megabyte per transaction. */
    @Test
    void largeAttachmentsStreamInAndOut() throws Exception {
        byte[] big = random(20 << 20, 1);
        var put = sendBytes("PUT", "/a/big/blob.bin", java.net.http.HttpRequest.BodyPublishers.ofByteArray(big), "Content-Type", "application/x-blob");
        assertEquals(201, put.statusCode(), new String(put.body()));
        JsonNode meta = s.asAdmin("GET", "/a/big", null).status(200).json().at("/_attachments/blob.bin");
        assertEquals(md5(big), meta.get("digest").asText());
        assertEquals(big.length, meta.get("length").asLong());
        assertEquals("application/x-blob", meta.get("content_type").asText());
        var get = sendBytes("GET", "/a/big/blob.bin", java.net.http.HttpRequest.BodyPublishers.noBody());
        assertEquals(200, get.statusCode());
        assertTrue(java.util.Arrays.equals(big, get.body()), "the same 20 MB back");
        // A range across a chunk boundary (chunks are 64 KB) reads only its chunks.
        int from = (1 << 20) - 10;
        var part = sendBytes("GET", "/a/big/blob.bin", java.net.http.HttpRequest.BodyPublishers.noBody(), "Range", "bytes=" + from + "-" + (from + 99_999));
        assertEquals(206, part.statusCode());
        assertTrue(java.util.Arrays.equals(java.util.Arrays.copyOfRange(big, from, from + 100_000), part.body()));
        assertEquals("bytes " + from + "-" + (from + 99_999) + "/" + big.length, part.headers().firstValue("Content-Range").orElseThrow());

        // Chunked transfer encoding: no length up front.
        byte[] mid = random(3 << 20, 2);
        var chunked = sendBytes("PUT", "/a/big/mid.bin?rev=" + put.headers().firstValue("ETag").orElseThrow().replace("\"", ""),
                java.net.http.HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(mid)), "Content-Type", "application/octet-stream");
        assertEquals(201, chunked.statusCode(), new String(chunked.body()));
        assertTrue(java.util.Arrays.equals(mid, sendBytes("GET", "/a/big/mid.bin", java.net.http.HttpRequest.BodyPublishers.noBody()).body()));
        JsonNode doc = s.asAdmin("GET", "/a/big", null).json();
        assertEquals(md5(big), doc.at("/_attachments/blob.bin/digest").asText(), "the first attachment kept as a stub");
        assertEquals(2, doc.at("/_attachments/mid.bin/revpos").asInt());
    }

    @Test
    void largePartsOfMultipartRelatedStreamToo() throws Exception {
        byte[] big = random(5 << 20, 3);
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.writeBytes(("--xyz\r\nContent-Type: application/json\r\n\r\n{\"_id\":\"mpbig\",\"_rev\":\"1-0123456789abcdef0123456789abcdef\","
                + "\"_attachments\":{\"small.txt\":{\"content_type\":\"text/plain\",\"revpos\":1,\"length\":2,\"follows\":true},"
                + "\"big.bin\":{\"content_type\":\"application/octet-stream\",\"revpos\":1,\"length\":" + big.length + ",\"follows\":true}}}\r\n"
                + "--xyz\r\n\r\nhi\r\n--xyz\r\nContent-Disposition: attachment; filename=\"big.bin\"\r\n\r\n").getBytes());
        body.writeBytes(big);
        body.writeBytes("\r\n--xyz--".getBytes());
        var put = sendBytes("PUT", "/a/mpbig?new_edits=false", java.net.http.HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()),
                "Content-Type", "multipart/related; boundary=\"xyz\"");
        assertEquals(201, put.statusCode(), new String(put.body()));
        JsonNode doc = s.asAdmin("GET", "/a/mpbig", null).status(200).json();
        assertEquals("1-0123456789abcdef0123456789abcdef", doc.get("_rev").asText());
        assertEquals(md5(big), doc.at("/_attachments/big.bin/digest").asText());
        assertEquals(1, doc.at("/_attachments/big.bin/revpos").asInt());
        assertEquals("hi", new String(sendBytes("GET", "/a/mpbig/small.txt", java.net.http.HttpRequest.BodyPublishers.noBody()).body()));
        assertTrue(java.util.Arrays.equals(big, sendBytes("GET", "/a/mpbig/big.bin", java.net.http.HttpRequest.BodyPublishers.noBody()).body()));
    }

    @Test
    void tooLargeStreamsAre413AndTheConnectionIsNotReused() throws Exception {
        s.docs.maxAttachmentSize(2 << 20);
        try {
            var r = sendBytes("PUT", "/a/toolarge/x.bin", java.net.http.HttpRequest.BodyPublishers.ofByteArray(random(3 << 20, 4)));
            assertEquals(413, r.statusCode());
            assertEquals("{\"error\":\"attachment_too_large\",\"reason\":\"x.bin\"}", Json.MAPPER.readTree(r.body()).toString());
            s.asAdmin("GET", "/a/toolarge", null).error(404, "not_found", null);
        } finally {
            s.docs.maxAttachmentSize(dev.chaise.storage.Storage.DEFAULT_MAX_ATTACHMENT_SIZE);
        }
        // The server answered before the body ended, so it closed that connection; the next request works.
        s.asAdmin("GET", "/a", null).status(200);
    }

    @Test
    void bodiesReadWholeHaveTheirOwnLimitAttachmentsDoNot() throws Exception {
        try (HttpTestServer small = new HttpTestServer(c -> c.withMaxBufferedBody(100_000), r -> {})) {
            small.asAdmin("PUT", "/b", null).status(201);
            small.asAdmin("PUT", "/b/json", "{\"v\":\"" + "x".repeat(200_000) + "\"}").error(413, "too_large", null);
            var b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(small.base + "/b/att/x.bin"))
                    .PUT(java.net.http.HttpRequest.BodyPublishers.ofByteArray(random(2 << 20, 5))).header("Authorization", HttpTestServer.ADMIN);
            assertEquals(201, small.client.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
        }
    }

    @Test
    void severalRangesComeAsMultipartByteranges() throws Exception {
        s.send("PUT", "/a/ranges/f.txt", "0123456789", "Authorization", HttpTestServer.ADMIN, "Content-Type", "application/x-text").status(201);
        var multi = s.send("GET", "/a/ranges/f.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=0-1, 7-, -2");
        multi.status(206);
        String ct = multi.header("Content-Type");
        assertTrue(ct.startsWith("multipart/byteranges; boundary=\""), ct);
        String boundary = ct.substring(ct.indexOf('"') + 1, ct.lastIndexOf('"'));
        assertEquals("--" + boundary
                + "\r\nContent-Type: application/x-text\r\nContent-Range: bytes 0-1/10\r\n\r\n01\r\n--" + boundary
                + "\r\nContent-Type: application/x-text\r\nContent-Range: bytes 7-9/10\r\n\r\n789\r\n--" + boundary
                + "\r\nContent-Type: application/x-text\r\nContent-Range: bytes 8-9/10\r\n\r\n89\r\n--" + boundary + "--", multi.text());
        // As CouchDB: bytes=0- and ten ranges or more are the whole attachment; one bad range is 416.
        assertEquals("0123456789", s.send("GET", "/a/ranges/f.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=0-").status(200).text());
        String ten = "bytes=" + String.join(",", java.util.Collections.nCopies(10, "1-2"));
        assertEquals("0123456789", s.send("GET", "/a/ranges/f.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", ten).status(200).text());
        s.send("GET", "/a/ranges/f.txt", null, "Authorization", HttpTestServer.ADMIN, "Range", "bytes=0-1,20-30").status(416);
    }
}
