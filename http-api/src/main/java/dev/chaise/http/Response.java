package dev.chaise.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What a handler answers: a whole body ({@link Full}) or one written in chunks as it is produced
 * ({@link Streamed}). Values; the server adds the common headers and writes them.
 */
public sealed interface Response permits Response.Full, Response.Streamed {
    String JSON = "application/json";

    record Header(String name, String value) {}

    int status();

    List<Header> headers();

    Response withHeader(String name, String value);

    default String header(String name) {
        for (Header h : headers()) if (h.name().equalsIgnoreCase(name)) return h.value();
        return null;
    }

    record Full(int status, List<Header> headers, byte[] body) implements Response {
        @Override
        public Full withHeader(String name, String value) {
            return new Full(status, add(headers, name, value), body);
        }
    }

    /**
     * A chunked body. {@code body} runs on the request's virtual thread after the handler returns;
     * nothing is sent until its first flush, so an exception before that still becomes a proper
     * error response.
     */
    record Streamed(int status, List<Header> headers, StreamBody body) implements Response {
        @Override
        public Streamed withHeader(String name, String value) {
            return new Streamed(status, add(headers, name, value), body);
        }
    }

    @FunctionalInterface
    interface StreamBody {
        void writeTo(ResponseStream out) throws Exception;
    }

    /** {@code value} as compact JSON and a newline, as CouchDB sends it. */
    static Full json(int status, Object value) {
        try {
            byte[] b = Json.MAPPER.writeValueAsBytes(value);
            byte[] body = new byte[b.length + 1];
            System.arraycopy(b, 0, body, 0, b.length);
            body[b.length] = '\n';
            return jsonWritten(status, body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unserializable response", e);
        }
    }

    /** JSON a handler wrote itself (compact, with the newline), where building a tree first would cost more than writing it. */
    static Full jsonWritten(int status, byte[] body) {
        return new Full(status, List.of(new Header("Content-Type", JSON)), body);
    }

    static Full ok() {
        return json(200, OK);
    }

    static Full text(int status, String contentType, String body) {
        return new Full(status, List.of(new Header("Content-Type", contentType)), body.getBytes(StandardCharsets.UTF_8));
    }

    /** A chunked JSON response (for {@code _changes}, {@code _all_docs}, ...). */
    static Streamed jsonStream(int status, StreamBody body) {
        return new Streamed(status, List.of(new Header("Content-Type", JSON)), body);
    }

    java.util.Map<String, Boolean> OK = java.util.Map.of("ok", true);

    private static List<Header> add(List<Header> headers, String name, String value) {
        List<Header> h = new ArrayList<>(headers.size() + 1);
        h.addAll(headers);
        h.add(new Header(name, value));
        return List.copyOf(h);
    }
}
