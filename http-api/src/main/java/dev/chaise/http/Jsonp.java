package dev.chaise.http;

import dev.chaise.http.config.ConfigStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * JSONP, as couch_httpd's {@code initialize_jsonp}/{@code start_jsonp}/{@code end_jsonp} frame it:
 * with {@code [chttpd] allow_jsonp} true (off by default), a JSON answer to a request with
 * {@code ?callback=name} becomes {@code /* CouchDB *}{@code /name(<json>);} and a newline, typed
 * {@code application/javascript}; chunked answers get the same frame around their chunks. A name
 * with anything but letters, digits, {@code . _ [ ]} is 400 {@code invalid_callback}. CouchDB
 * checks the name when it starts the answer, so the handler has already run; so here.
 */
final class Jsonp {
    private static final String JAVASCRIPT = "application/javascript";

    private Jsonp() {}

    static Response apply(Request req, Response resp, ConfigStore config) {
        String callback = req.query("callback");
        if (callback == null || callback.isEmpty()) return resp;
        if (!"true".equals(config.get("chttpd", "allow_jsonp").map(String::strip).orElse("false"))) return resp;
        if (!valid(callback)) return ErrorMapper.map(HttpError.badRequest("invalid_callback"), req).toResponse();
        String type = resp.header("Content-Type");
        // Only JSON answers; a body sent with its length is an attachment's bytes, which CouchDB never frames.
        if (type == null || !type.startsWith(Response.JSON) || resp.header("Content-Length") != null) return resp;
        byte[] start = ("/* CouchDB */" + callback + "(").getBytes(StandardCharsets.UTF_8);
        byte[] end = ");\n".getBytes(StandardCharsets.UTF_8);
        return switch (resp) {
            case Response.Full f -> {
                byte[] body = f.body();
                int n = body.length > 0 && body[body.length - 1] == '\n' ? body.length - 1 : body.length; // the JSON's own newline
                byte[] out = new byte[start.length + n + end.length];
                System.arraycopy(start, 0, out, 0, start.length);
                System.arraycopy(body, 0, out, start.length, n);
                System.arraycopy(end, 0, out, start.length + n, end.length);
                yield new Response.Full(f.status(), retyped(f.headers()), out);
            }
            case Response.Streamed s -> new Response.Streamed(s.status(), retyped(s.headers()), out -> {
                out.write(start);
                HoldNewline held = new HoldNewline(out);
                s.body().writeTo(held);
                out.write(end);
            });
        };
    }

    /** couch_httpd's validate_callback. */
    static boolean valid(String callback) {
        for (int i = 0; i < callback.length(); i++) {
            char c = callback.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '[' || c == ']';
            if (!ok) return false;
        }
        return true;
    }

    private static List<Response.Header> retyped(List<Response.Header> headers) {
        List<Response.Header> out = new ArrayList<>(headers.size());
        for (Response.Header h : headers) {
            out.add(h.name().equalsIgnoreCase("Content-Type") ? new Response.Header(h.name(), JAVASCRIPT) : h);
        }
        return List.copyOf(out);
    }

    /**
     * Passes writes on but keeps back a final newline until more follows: CouchDB ends a chunked
     * JSON answer with its newline only after the callback's {@code );}.
     */
    private static final class HoldNewline implements ResponseStream {
        private final ResponseStream out;
        private boolean held;

        HoldNewline(ResponseStream out) {
            this.out = out;
        }

        @Override
        public void write(byte[] bytes) {
            if (bytes.length == 0) return;
            if (held) out.write(new byte[] {'\n'});
            held = bytes[bytes.length - 1] == '\n';
            out.write(held ? java.util.Arrays.copyOf(bytes, bytes.length - 1) : bytes);
        }

        @Override
        public void flush() {
            out.flush();
        }

        @Override
        public boolean isOpen() {
            return out.isOpen();
        }
    }
}
