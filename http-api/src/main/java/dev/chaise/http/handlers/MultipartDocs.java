package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
 * the replicator ({@code couch_doc:doc_to_multi_part_stream}): plain JSON, or, when the document
 * carries attachment data, a nested {@code multipart/related} body whose first part is the JSON
 * (each such attachment marked {@code "follows": true}, its data removed) and whose next parts are
 * the attachments' raw bytes, in the JSON's order.
 */
final class MultipartDocs {
    /** A document as one body: {@code application/json}, or {@code multipart/related} when it carries attachment data. */
    record Part(String contentType, byte[] body) {}

    private MultipartDocs() {}

    static String boundary() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static Part of(JsonNode doc) throws Exception {
        JsonNode atts = doc.get("_attachments");
        List<String> names = new ArrayList<>();
        if (atts != null && atts.isObject()) {
            for (Map.Entry<String, JsonNode> e : atts.properties()) if (e.getValue().has("data")) names.add(e.getKey());
        }
        if (names.isEmpty()) return new Part("application/json", Json.MAPPER.writeValueAsBytes(doc));
        ObjectNode json = ((ObjectNode) doc).deepCopy();
        List<byte[]> data = new ArrayList<>(names.size());
        for (String name : names) {
            ObjectNode a = (ObjectNode) json.get("_attachments").get(name);
            byte[] bytes = Base64.getDecoder().decode(a.get("data").asText());
            data.add(bytes);
            a.remove("data");
            a.put("length", bytes.length);
            a.put("follows", true);
        }
        String inner = boundary();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        text(out, "--" + inner + "\r\nContent-Type: application/json\r\n\r\n");
        out.write(Json.MAPPER.writeValueAsBytes(json));
        text(out, "\r\n--" + inner);
        for (int i = 0; i < names.size(); i++) {
            ObjectNode a = (ObjectNode) json.get("_attachments").get(names.get(i));
            text(out, "\r\nContent-Disposition: attachment; filename=\"" + names.get(i) + "\"");
            text(out, "\r\nContent-Type: " + a.path("content_type").asText("application/octet-stream"));
            text(out, "\r\nContent-Length: " + data.get(i).length + "\r\n\r\n");
            out.write(data.get(i));
            text(out, "\r\n--" + inner);
        }
        text(out, "--");
        return new Part("multipart/related; boundary=\"" + inner + "\"", out.toByteArray());
    }

    /**
     * One document's headers and body, after its boundary line; with {@code idHeaders}, a related
     * part also names its document ({@code X-Doc-Id}, {@code X-Rev-Id}), as CouchDB's _bulk_get does.
     */
    static void writeDoc(ByteArrayOutputStream out, JsonNode doc, boolean idHeaders) throws Exception {
        Part part = of(doc);
        if (idHeaders && !part.contentType().equals("application/json")) {
            text(out, "\r\nX-Doc-Id: " + doc.path("_id").asText() + "\r\nX-Rev-Id: " + doc.path("_rev").asText());
        }
        text(out, "\r\nContent-Type: " + part.contentType() + "\r\n\r\n");
        out.write(part.body());
    }

    /** An error entry ({@code {"missing": rev}} or {@code _bulk_get}'s error object), after its boundary line. */
    static void writeError(ByteArrayOutputStream out, JsonNode error) throws Exception {
        text(out, "\r\nContent-Type: application/json; error=\"true\"\r\n\r\n");
        out.write(Json.MAPPER.writeValueAsBytes(error));
    }

    static void text(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }
}
