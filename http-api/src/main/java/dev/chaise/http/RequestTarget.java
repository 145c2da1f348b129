package dev.chaise.http;

import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The request-target split as CouchDB does: path segments (empty ones dropped), each URL-decoded, and the query. */
record RequestTarget(String rawPath, List<String> path, Map<String, List<String>> query) {

    static RequestTarget parse(String rawUri, boolean decodePlusToSpace) {
        checkUrlEncoding(rawUri);
        int hash = rawUri.indexOf('#');
        String uri = hash < 0 ? rawUri : rawUri.substring(0, hash);
        // absolute-form (http://host/path), as sent to proxies: only the path matters here
        int scheme = uri.indexOf("://");
        if (scheme > 0 && uri.charAt(0) != '/') {
            int slash = uri.indexOf('/', scheme + 3);
            uri = slash < 0 ? "/" : uri.substring(slash);
        }
        int q = uri.indexOf('?');
        String rawPath = q < 0 ? uri : uri.substring(0, q);
        if (!rawPath.startsWith("/")) throw HttpError.badRequest("invalid_path");
        List<String> segments = new ArrayList<>();
        for (String s : rawPath.split("/")) {
            if (!s.isEmpty()) segments.add(decode(s, decodePlusToSpace));
        }
        Map<String, List<String>> query = Map.of();
        if (q >= 0) {
            query = Collections.unmodifiableMap(new LinkedHashMap<>(
                    new QueryStringDecoder(uri.substring(q + 1), StandardCharsets.UTF_8, false).parameters()));
        }
        return new RequestTarget(rawPath, List.copyOf(segments), query);
    }

    /** CouchDB's check_url_encoding: every {@code %} is followed by two hex digits. */
    static void checkUrlEncoding(String uri) {
        // indexOf, not a loop over every char: most targets have no escape at all (issue 27)
        for (int i = uri.indexOf('%'); i >= 0; i = uri.indexOf('%', i + 3)) {
            if (i + 2 >= uri.length() || Character.digit(uri.charAt(i + 1), 16) < 0 || Character.digit(uri.charAt(i + 2), 16) < 0) {
                throw HttpError.badRequest("invalid_url_encoding");
            }
        }
    }

    /**
     * Percent-decodes one segment. Bytes that are not UTF-8 become lone surrogates (U+DC80..U+DCFF,
     * Python's {@code surrogateescape}), which no valid name has: the check of whatever the segment
     * names then refuses it with its own error, as CouchDB does ({@code illegal_docid} "Document
     * id must be valid UTF-8" for a document id). A {@code %} without two hex digits is
     * {@code invalid_url_encoding}.
     */
    static String decode(String s, boolean plusToSpace) {
        if (s.indexOf('%') < 0 && (!plusToSpace || s.indexOf('+') < 0)) return s;
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            byte b = raw[i];
            if (b == '%') {
                int hi = i + 2 < raw.length ? Character.digit(raw[i + 1], 16) : -1;
                int lo = i + 2 < raw.length ? Character.digit(raw[i + 2], 16) : -1;
                if (hi < 0 || lo < 0) throw HttpError.badRequest("invalid_url_encoding");
                out.write((hi << 4) | lo);
                i += 2;
            } else if (b == '+' && plusToSpace) {
                out.write(' ');
            } else {
                out.write(b);
            }
        }
        return utf8(out.toByteArray());
    }

    private static String utf8(byte[] bytes) {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        while (true) {
            CoderResult r = d.decode(in, out, true);
            if (r.isUnderflow()) break;
            for (int k = 0; k < r.length(); k++) out.put((char) (0xDC00 | (in.get() & 0xFF)));
        }
        d.flush(out);
        return out.flip().toString();
    }
}
