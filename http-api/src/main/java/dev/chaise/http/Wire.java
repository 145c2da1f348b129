package dev.chaise.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;

/**
 * An answer as the bytes that go out: the status line and headers (with the ones Chaise adds to
 * every answer), a full body after them, or a chunk of a streamed one. Written by the thread that
 * ran the request, so the event loop only copies it to the socket: Netty's encoder
 * on the loop built the head from a header map and wrote head and body as two buffers joined by a
 * promise combiner (docs/benchmarks.md, issue 27, "The cuts").
 */
final class Wire {
    static final String SERVER = "CouchDB/" + dev.chaise.http.config.HttpConfig.COUCHDB_VERSION + " (Chaise)";
    static final byte[] CONTINUE = ascii("HTTP/1.1 100 Continue\r\n\r\n");
    static final byte[] LAST_CHUNK = ascii("0\r\n\r\n");
    /** RFC 7231's IMF-fixdate (the JDK's RFC_1123 formatter drops the day's leading zero). */
    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", java.util.Locale.US);
    /** The headers every answer gets from here; a handler's own of these names gives way. */
    private static final String[] OURS = {"server", "date", "x-couch-request-id", "x-couchdb-body-time", "connection", "content-length", "transfer-encoding"};
    private static final byte[][] STATUS_LINES = new byte[600][];
    /** Room for a typical head (about 250 bytes), so most answers are written without growing. */
    private static final int HEAD_ROOM = 384;

    private byte[] b;
    private int n;

    private Wire(int capacity) {
        b = new byte[capacity];
    }

    /**
     * A whole answer: its head, with {@code Content-Length} (the body's; for a streamed answer sent
     * as a HEAD's, the handler's if it knows it; none for a 204), then {@code body} unless the
     * answer has none on the wire (a HEAD's, a 1xx, 204 or 304).
     */
    static ByteBuf full(ByteBufAllocator alloc, Response resp, byte[] body, boolean head, String requestId, boolean keepAlive) {
        int status = resp.status();
        long length = !(resp instanceof Response.Full) ? declaredLength(resp) : status == 204 ? -1 : body.length;
        boolean sendBody = !head && status >= 200 && status != 204 && status != 304;
        Wire w = new Wire(HEAD_ROOM);
        w.head(resp, requestId, keepAlive, length, false);
        // Straight into the transport's kind of buffer: a heap buffer written to a native socket
        // is copied into a direct one first (Netty's epoll channel), a second copy of the body.
        ByteBuf out = alloc.ioBuffer(w.n + (sendBody ? body.length : 0));
        out.writeBytes(w.b, 0, w.n);
        if (sendBody) out.writeBytes(body);
        return out;
    }

    /**
     * A streamed answer's head: with the handler's {@code Content-Length} if it set one (an
     * attachment is sent as it is, as CouchDB does), else {@link #chunked}.
     */
    static ByteBuf streamHead(Response resp, String requestId, boolean keepAlive) {
        Wire w = new Wire(HEAD_ROOM);
        w.head(resp, requestId, keepAlive, declaredLength(resp), chunked(resp));
        return w.done();
    }

    /** Whether a streamed answer's body goes out in chunks: when its handler did not say its length. */
    static boolean chunked(Response resp) {
        return declaredLength(resp) < 0;
    }

    private static long declaredLength(Response resp) {
        String declared = resp.header("Content-Length");
        return declared == null ? -1 : Long.parseLong(declared.strip());
    }

    /** {@code data} as one chunk of a chunked body (never empty: an empty chunk ends the body). */
    static ByteBuf chunk(byte[] data, int length) {
        Wire w = new Wire(length + 12);
        w.text(Integer.toHexString(length)).crlf();
        w.bytes(data, 0, length);
        w.crlf();
        return w.done();
    }

    private void head(Response resp, String requestId, boolean keepAlive, long contentLength, boolean chunked) {
        byte[] line = statusLine(resp.status());
        bytes(line, 0, line.length);
        boolean cacheControl = false;
        for (Response.Header h : resp.headers()) {
            String name = h.name();
            if (ours(name)) continue;
            if (!cacheControl && name.equalsIgnoreCase("cache-control")) cacheControl = true;
            header(checkedName(name), headerValue(h.value()));
        }
        if (!cacheControl) header("cache-control", "must-revalidate");
        header("server", SERVER);
        header("date", httpDate());
        header("X-Couch-Request-ID", requestId);
        header("X-CouchDB-Body-Time", "0");
        header("connection", keepAlive ? "keep-alive" : "close");
        if (chunked) header("transfer-encoding", "chunked");
        else if (contentLength >= 0) header("content-length", Long.toString(contentLength));
        crlf();
    }

    /**
     * {@code v} as a header can carry it: characters other than visible ASCII, space and tab
     * (control characters; past U+00FF Netty would write only the low byte, so U+010A would reach
     * the wire as a bare LF) are percent-encoded as UTF-8. Handlers encode names and ids in the
     * headers they build (Location); this is the net under them, for values from stored data.
     */
    static String headerValue(String v) {
        int i = 0;
        while (i < v.length() && safe(v.charAt(i))) i++;
        if (i == v.length()) return v;
        StringBuilder b = new StringBuilder(v.length() + 16).append(v, 0, i);
        for (byte x : v.substring(i).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            if (x >= 0 && safe((char) x)) b.append((char) x);
            else b.append('%').append(Character.toUpperCase(Character.forDigit((x >> 4) & 0xf, 16))).append(Character.toUpperCase(Character.forDigit(x & 0xf, 16)));
        }
        return b.toString();
    }

    private static boolean safe(char c) {
        return c >= 0x20 && c < 0x7f || c == '\t';
    }

    private static boolean ours(String name) {
        for (String o : OURS) if (o.equalsIgnoreCase(name)) return true;
        return false;
    }

    /** A header name must be an RFC 9110 token: anything else could split the head. */
    private static String checkedName(String name) {
        if (name.isEmpty()) throw new IllegalArgumentException("empty header name");
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7f || "\"(),/:;<=>?@[\\]{}".indexOf(c) >= 0) throw new IllegalArgumentException("invalid header name: " + name);
        }
        return name;
    }

    private static byte[] statusLine(int status) {
        if (status < 100 || status >= STATUS_LINES.length) return ascii("HTTP/1.1 " + io.netty.handler.codec.http.HttpResponseStatus.valueOf(status) + "\r\n");
        byte[] line = STATUS_LINES[status];
        if (line == null) {
            line = ascii("HTTP/1.1 " + io.netty.handler.codec.http.HttpResponseStatus.valueOf(status) + "\r\n");
            STATUS_LINES[status] = line; // a benign race: every thread computes the same line
        }
        return line;
    }

    private void header(String name, String value) {
        text(name);
        room(2);
        b[n++] = ':';
        b[n++] = ' ';
        text(value);
        crlf();
    }

    private Wire crlf() {
        room(2);
        b[n++] = '\r';
        b[n++] = '\n';
        return this;
    }

    /** Characters as single bytes, as Netty's encoder wrote them (values are made visible ASCII by headerValue). */
    private Wire text(String s) {
        room(s.length());
        for (int i = 0; i < s.length(); i++) b[n++] = (byte) s.charAt(i);
        return this;
    }

    private void bytes(byte[] x, int from, int length) {
        room(length);
        System.arraycopy(x, from, b, n, length);
        n += length;
    }

    private void room(int more) {
        if (n + more > b.length) b = Arrays.copyOf(b, Math.max(b.length * 2, n + more));
    }

    private ByteBuf done() {
        return Unpooled.wrappedBuffer(b, 0, n);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The Date header's text, formatted once a second: formatting it per answer was 1 % of a GET's CPU. */
    private record DateText(long second, String text) {}

    private static volatile DateText date = new DateText(-1, "");

    static String httpDate() {
        long now = System.currentTimeMillis() / 1000;
        DateText d = date;
        if (d.second() != now) {
            d = new DateText(now, HTTP_DATE.format(java.time.Instant.ofEpochSecond(now).atZone(ZoneOffset.UTC)));
            date = d;
        }
        return d.text();
    }
}
