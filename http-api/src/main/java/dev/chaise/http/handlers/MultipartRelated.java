package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ErrorMapper;
import dev.chaise.http.HttpError;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * A document sent as {@code multipart/related}, as the CouchDB replicator sends one with
 * attachments: the JSON first, then one part per attachment marked {@code "follows": true}, in the
 * order of {@code _attachments}. The result is the same document with those attachments inline,
 * so the write path is the one JSON documents take.
 */
final class MultipartRelated {
    private MultipartRelated() {}

    static JsonNode parse(String contentType, byte[] body) {
        String boundary = boundary(contentType);
        List<byte[]> parts = split(body, ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1));
        if (parts.isEmpty()) throw HttpError.badRequest("The multipart body has no parts.");
        JsonNode doc;
        try {
            doc = Json.MAPPER.readTree(content(parts.getFirst()));
        } catch (java.io.IOException e) {
            throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
        }
        if (doc == null || !doc.isObject()) throw HttpError.badRequest("The first part must be the document's JSON.");
        JsonNode atts = doc.get("_attachments");
        int next = 1;
        if (atts != null && atts.isObject()) {
            for (var e : atts.properties()) {
                if (!(e.getValue() instanceof ObjectNode a) || !a.path("follows").asBoolean(false)) continue;
                if (next >= parts.size()) throw HttpError.badRequest("Missing the body of attachment " + e.getKey() + ".");
                byte[] data = content(parts.get(next++));
                a.remove("follows");
                a.put("data", Base64.getEncoder().encodeToString(data));
            }
        }
        return doc;
    }

    private static String boundary(String contentType) {
        for (String p : contentType.split(";")) {
            String t = p.strip();
            if (t.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                String b = t.substring("boundary=".length());
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) b = b.substring(1, b.length() - 1);
                if (!b.isEmpty()) return b;
            }
        }
        throw HttpError.badRequest("multipart/related needs a boundary.");
    }

    /** The parts between delimiters, each still with its headers. */
    private static List<byte[]> split(byte[] body, byte[] delimiter) {
        List<byte[]> out = new ArrayList<>();
        int at = indexOf(body, delimiter, 0);
        if (at < 0) throw HttpError.badRequest("The multipart body does not start with its boundary.");
        while (true) {
            int start = at + delimiter.length;
            if (start + 1 < body.length && body[start] == '-' && body[start + 1] == '-') break; // the closing delimiter
            int end = indexOf(body, delimiter, start);
            if (end < 0) throw HttpError.badRequest("The multipart body is not closed.");
            int from = start;
            if (from + 1 < body.length && body[from] == '\r' && body[from + 1] == '\n') from += 2;
            int to = end;
            if (to - 2 >= from && body[to - 2] == '\r' && body[to - 1] == '\n') to -= 2;
            out.add(java.util.Arrays.copyOfRange(body, from, to));
            at = end;
        }
        return out;
    }

    /** A part's content: what follows its blank line. */
    private static byte[] content(byte[] part) {
        byte[] sep = {'\r', '\n', '\r', '\n'};
        if (part.length >= 2 && part[0] == '\r' && part[1] == '\n') return java.util.Arrays.copyOfRange(part, 2, part.length); // no headers
        int i = indexOf(part, sep, 0);
        if (i < 0) throw HttpError.badRequest("A multipart part has no header end.");
        return java.util.Arrays.copyOfRange(part, i + 4, part.length);
    }

    static int indexOf(byte[] hay, byte[] needle, int from) {
        outer:
        for (int i = from; i <= hay.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) if (hay[i + j] != needle[j]) continue outer;
            return i;
        }
        return -1;
    }
}
