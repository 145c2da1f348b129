package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.storage.Database;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One document as a part of a multipart response (open_revs, _bulk_get), as CouchDB writes it for
 * the replicator ({@code couch_doc:doc_to_multi_part_stream}): plain JSON, or, when attachment
 * bodies go with it, a nested {@code multipart/related} body whose first part is the JSON (each
 * such attachment marked {@code "follows": true}, with its length) and whose next parts are the
 * attachments' raw bytes, in the JSON's order. The bodies come from {@link Bodies}: inline base64
 * already in the document ({@link #INLINE}), or streamed from storage chunk by chunk
 * ({@link #stored}), so a response of any size passes through a few hundred KB.
 */
final class MultipartDocs {
    private MultipartDocs() {}

    /** An attachment whose body follows the document's JSON, how it is encoded (null: identity), and how to write that body. */
    record Following(String name, long length, String contentType, String encoding, java.util.function.Consumer<ResponseStream> body) {}

    /** Where the bodies of a document's following attachments come from. */
    interface Bodies {
        /** Marks the attachments whose bodies follow ({@code follows}, {@code length}) in {@code doc}, in order. */
        List<Following> follow(ObjectNode doc);
    }

    /** Bodies inline as base64 {@code data} (the document read with attachments inlined). */
    static final Bodies INLINE = doc -> {
        List<Following> out = new ArrayList<>();
        JsonNode atts = doc.get("_attachments");
        if (atts == null || !atts.isObject()) return out;
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            if (!(e.getValue() instanceof ObjectNode a) || !a.has("data")) continue;
            byte[] bytes = Base64.getDecoder().decode(a.remove("data").asText());
            a.remove(List.of("encoding", "encoded_length")); // inline data is identity
            a.put("length", bytes.length);
            a.put("follows", true);
            out.add(new Following(e.getKey(), bytes.length, a.path("content_type").asText("application/octet-stream"), null, s -> s.write(bytes)));
        }
        return out;
    };

    /**
     * Bodies read from storage: the attachments newer than position {@code sincePos} (0: all,
     * negative: none), as stored: a gzipped one (its stub showing {@code encoding}, as
     * {@link OpenRevs#read} renders it for multipart) goes gzipped with {@code Content-Encoding},
     * its part {@code encoded_length} long, as couch_doc:doc_to_multi_part_stream sends it.
     */
    static Bodies stored(Database db, String docId, long sincePos) {
        return doc -> {
            List<Following> out = new ArrayList<>();
            JsonNode atts = doc.get("_attachments");
            if (sincePos < 0 || atts == null || !atts.isObject()) return out;
            for (Map.Entry<String, JsonNode> e : atts.properties()) {
                if (!(e.getValue() instanceof ObjectNode a) || a.path("revpos").asLong() <= sincePos) continue;
                a.remove("stub");
                a.put("follows", true);
                String encoding = a.path("encoding").asText(null);
                if (encoding != null) { // after follows, as couch_att:to_json writes them
                    JsonNode encodedLength = a.remove("encoded_length");
                    a.set("encoding", a.remove("encoding"));
                    a.set("encoded_length", encodedLength);
                }
                String digest = a.path("digest").asText();
                long length = encoding == null ? a.path("length").asLong() : a.path("encoded_length").asLong();
                out.add(new Following(e.getKey(), length, a.path("content_type").asText("application/octet-stream"), encoding,
                        s -> AttachmentHandlers.stream(s, db, docId, digest, 0, length)));
            }
            return out;
        };
    }

    static String boundary() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The content type of a document's body, the bytes of its attachment parts, and what writes it. */
    private record Body(String contentType, long attachmentBytes, java.util.function.Consumer<ResponseStream> writer) {}

    private static Body body(JsonNode doc, Bodies bodies) throws Exception {
        ObjectNode json = ((ObjectNode) doc).deepCopy();
        List<Following> follows = bodies.follow(json);
        byte[] jsonBytes = Json.MAPPER.writeValueAsBytes(json);
        if (follows.isEmpty()) return new Body("application/json", 0, out -> out.write(jsonBytes));
        String inner = boundary();
        long attachmentBytes = 0;
        for (Following f : follows) attachmentBytes += f.length();
        return new Body("multipart/related; boundary=\"" + inner + "\"", attachmentBytes, out -> {
            text(out, "--" + inner + "\r\nContent-Type: application/json\r\n\r\n");
            out.write(jsonBytes);
            text(out, "\r\n--" + inner);
            for (Following f : follows) {
                text(out, "\r\nContent-Disposition: attachment; filename=\"" + f.name() + "\"");
                text(out, "\r\nContent-Type: " + f.contentType());
                text(out, "\r\nContent-Length: " + f.length());
                if (f.encoding() != null) text(out, "\r\nContent-Encoding: " + f.encoding());
                text(out, "\r\n\r\n");
                f.body().accept(out);
                text(out, "\r\n--" + inner);
            }
            text(out, "--");
        });
    }

    /** Attachment bytes up to which a document GET's multipart answer is built whole, to announce its length as CouchDB does. */
    private static final long WHOLE_ANSWER_BYTES = 1 << 20;

    /**
     * A document GET's {@code multipart/related} answer (chttpd_db:send_doc_efficiently): the JSON,
     * then the bodies as stored; plain JSON when no body follows. Up to a megabyte of bodies it is
     * built whole and sent with its Content-Length, as CouchDB sends it; more streams from storage.
     */
    static Response related(ObjectNode doc, Bodies bodies) throws Exception {
        Body b = body(doc, bodies);
        if (b.contentType().equals("application/json")) return Response.json(200, doc);
        List<Response.Header> headers = List.of(new Response.Header("Content-Type", b.contentType()));
        if (b.attachmentBytes() > WHOLE_ANSWER_BYTES) return new Response.Streamed(200, headers, out -> b.writer().accept(out));
        Buffer buf = new Buffer();
        b.writer().accept(buf);
        return new Response.Full(200, headers, buf.bytes.toByteArray());
    }

    /**
     * One document's headers and body, after its boundary line; with {@code idHeaders}, a related
     * part also names its document ({@code X-Doc-Id}, {@code X-Rev-Id}), as CouchDB's _bulk_get does.
     */
    static void writeDoc(ResponseStream out, JsonNode doc, boolean idHeaders, Bodies bodies) throws Exception {
        Body b = body(doc, bodies);
        if (idHeaders && !b.contentType().equals("application/json")) {
            text(out, "\r\nX-Doc-Id: " + doc.path("_id").asText() + "\r\nX-Rev-Id: " + doc.path("_rev").asText());
        }
        text(out, "\r\nContent-Type: " + b.contentType() + "\r\n\r\n");
        b.writer().accept(out);
    }

    /** An error entry ({@code {"missing": rev}} or {@code _bulk_get}'s error object), after its boundary line. */
    static void writeError(ResponseStream out, JsonNode error) throws Exception {
        text(out, "\r\nContent-Type: application/json; error=\"true\"\r\n\r\n");
        out.write(Json.MAPPER.writeValueAsBytes(error));
    }

    static void text(ResponseStream out, String s) {
        out.write(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A response built whole in memory (_bulk_get's multipart, whose bodies are inline already). */
    static final class Buffer implements ResponseStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        @Override
        public void write(byte[] b) {
            bytes.writeBytes(b);
        }

        @Override
        public void flush() {}

        @Override
        public boolean isOpen() {
            return true;
        }
    }
}
