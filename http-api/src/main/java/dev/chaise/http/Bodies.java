package dev.chaise.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.zip.GZIPInputStream;

/** Reading request bodies as CouchDB does: Content-Type checks, gzip, and JSON via the one mapper. */
public final class Bodies {
    private Bodies() {}

    /** 415 unless the body's media type is {@code type}, with CouchDB's reason. */
    public static void requireContentType(Request req, String type) {
        if (!type.equals(req.contentType())) throw HttpError.badContentType("Content-Type must be " + type);
    }

    /**
     * The body, gunzipped if {@code Content-Encoding: gzip}; 413 past {@code limit} bytes after
     * inflation, or past {@code max_buffered_body_size}, whichever is less: a small gzip body must
     * not inflate to gigabytes in memory.
     */
    public static byte[] bytes(Request req, long limit) {
        if (!gzipped(req)) return req.body();
        return req.content().readAllInflated(gunzip(new ByteArrayInputStream(req.body())), Math.min(limit, req.content().bufferLimit()));
    }

    /** The body as a stream as it arrives, gunzipped if {@code Content-Encoding: gzip}. */
    public static InputStream stream(Request req) {
        return gzipped(req) ? gunzip(req.content().stream()) : req.content().stream();
    }

    /** Whether the body is gzip; 415 for any other encoding but identity. */
    private static boolean gzipped(Request req) {
        String enc = req.header("Content-Encoding");
        if (enc == null || enc.equalsIgnoreCase("identity")) return false;
        if (!enc.equalsIgnoreCase("gzip")) throw HttpError.badContentType("Content-Encoding " + enc + " is not supported");
        return true;
    }

    /** Inflates {@code raw} as it is read (the header too, so nothing is read before the handler asks); bad gzip is 400. */
    private static InputStream gunzip(InputStream raw) {
        return new InputStream() {
            private InputStream gz;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                try {
                    if (gz == null) gz = new GZIPInputStream(raw);
                    return gz.read(b, off, len);
                } catch (IOException e) {
                    throw HttpError.badRequest("Request body is not valid gzip");
                }
            }
        };
    }

    /** The body as JSON; anything unparsable (including an empty body) is 400 "invalid UTF-8 JSON". */
    public static JsonNode json(Request req) {
        byte[] b = bytes(req, Integer.MAX_VALUE);
        try {
            JsonNode n = Json.MAPPER.readTree(b);
            if (n == null || n.isMissingNode()) throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a JacksonException: mapped to 400 in ErrorMapper
        }
    }

    public static ObjectNode jsonObject(Request req) {
        JsonNode n = json(req);
        if (!n.isObject()) throw HttpError.badRequest("Request body must be a JSON object");
        return (ObjectNode) n;
    }
}
