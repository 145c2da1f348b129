package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ErrorMapper;
import dev.chaise.http.HttpError;
import dev.chaise.replicator.MultipartStream;
import dev.chaise.storage.Database;
import dev.chaise.storage.StoredAttachment;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * A document sent as {@code multipart/related}, as the CouchDB replicator sends one with
 * attachments: the JSON first, then one part per attachment marked {@code "follows": true}, in the
 * order of {@code _attachments}. The body is read as it arrives: a small attachment becomes inline
 * data, so the write path is the one JSON documents take; a large one streams into storage ahead
 * of the document and stays marked {@code follows} ({@link Database#readAttachment}).
 */
final class MultipartRelated {
    private MultipartRelated() {}

    /** Where an attachment part's bytes go: {@link Database#readAttachment}, for this document. */
    interface Sink {
        StoredAttachment read(String name, ObjectNode meta, InputStream in);
    }

    /** The document, and the attachments stored ahead of it by name. */
    record Parsed(JsonNode doc, Map<String, StoredAttachment> stored) {}

    static Parsed read(String contentType, InputStream body, Sink sink) {
        try {
            return parse(contentType, body, sink);
        } catch (MultipartStream.Malformed e) {
            throw HttpError.badRequest(e.getMessage());
        }
    }

    private static Parsed parse(String contentType, InputStream body, Sink sink) {
        MultipartStream parts = new MultipartStream(body, MultipartStream.boundary(contentType));
        if (parts.nextPart() == null) throw HttpError.badRequest("The multipart body has no parts.");
        JsonNode doc;
        try {
            doc = Json.MAPPER.readTree(parts.content());
        } catch (IOException e) {
            throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
        }
        if (doc == null || !doc.isObject()) throw HttpError.badRequest("The first part must be the document's JSON.");
        Map<String, StoredAttachment> stored = new HashMap<>();
        JsonNode atts = doc.get("_attachments");
        if (atts != null && atts.isObject()) {
            for (var e : atts.properties()) {
                if (!(e.getValue() instanceof ObjectNode a) || !a.path("follows").asBoolean(false)) continue;
                if (parts.nextPart() == null) throw HttpError.badRequest("Missing the body of attachment " + e.getKey() + ".");
                checkEncoding(a);
                StoredAttachment st = sink.read(e.getKey(), a, parts.content());
                if (st != null) stored.put(e.getKey(), st);
            }
        }
        return new Parsed(doc, stored);
    }

    /**
     * An attachment's bytes as they came: CouchDB's replicator sends those it keeps compressed as
     * they are ({@code "encoding": "gzip"}, the identity {@code length}, {@code encoded_length}),
     * and they are stored so ({@link Database#readAttachment}); any other encoding is 415, as
     * couch_att:encoded_lengths_from_json cannot take it.
     */
    private static void checkEncoding(ObjectNode meta) {
        JsonNode enc = meta.get("encoding");
        if (enc == null || enc.isNull() || enc.asText().equals("identity")) {
            meta.remove(java.util.List.of("encoding", "encoded_length"));
        } else if (!enc.asText().equals("gzip")) {
            throw HttpError.badContentType("Only gzip and identity content-encodings are supported");
        }
    }
}
