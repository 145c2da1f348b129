package dev.chaise.replicator;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A MIME multipart body read as it arrives (RFC 2046): parts one after another, each content a
 * stream that ends at the next delimiter, so a part of any size passes through a 64 KB window.
 * Malformed bodies throw {@link Malformed}. The server reads replicated documents with it, the
 * replicator reads {@code open_revs} responses with it.
 */
public final class MultipartStream {
    /** A body that is not the multipart it claims to be (the HTTP API answers 400 bad_request). */
    public static final class Malformed extends RuntimeException {
        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    private static final int WINDOW = 64 * 1024;

    private final InputStream in;
    private final byte[] delimiter; // CRLF "--" boundary
    private final byte[] buf;
    private int pos;
    private int lim;
    private boolean eof;
    private boolean started; // past the preamble
    private boolean inPart; // inside a part's content, before its closing delimiter
    private boolean closed;
    private Content current;

    public MultipartStream(InputStream in, String boundary) {
        this.in = in;
        this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        this.buf = new byte[WINDOW + delimiter.length];
        // The first delimiter may open the body without a CRLF before it.
        buf[0] = '\r';
        buf[1] = '\n';
        lim = 2;
    }

    /** The boundary parameter of a multipart Content-Type. */
    public static String boundary(String contentType) {
        for (String p : contentType.split(";")) {
            String t = p.strip();
            if (t.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                String b = t.substring("boundary=".length());
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) b = b.substring(1, b.length() - 1);
                if (!b.isEmpty()) return b;
            }
        }
        throw new Malformed("The multipart body needs a boundary.");
    }

    /**
     * Moves to the next part and returns its headers (names lower case), or null after the
     * closing delimiter. The previous part's content, if unread, is skipped.
     */
    public Map<String, String> nextPart() {
        if (closed) return null;
        if (!started) {
            drain(new Content()); // the preamble, up to the first delimiter
            started = true;
        } else if (inPart) {
            drain(content());
        }
        // After a delimiter: "--" closes the body; otherwise padding, then CRLF.
        if (!fill(2)) throw new Malformed("The multipart body is not closed.");
        if (buf[pos] == '-' && buf[pos + 1] == '-') {
            closed = true;
            return null;
        }
        String padding = line();
        if (!padding.isBlank()) throw new Malformed("Malformed multipart delimiter.");
        Map<String, String> headers = new LinkedHashMap<>();
        for (String l = line(); !l.isEmpty(); l = line()) {
            int colon = l.indexOf(':');
            if (colon <= 0) throw new Malformed("Malformed multipart part header.");
            headers.put(l.substring(0, colon).strip().toLowerCase(Locale.ROOT), l.substring(colon + 1).strip());
            if (headers.size() > 100) throw new Malformed("Too many multipart part headers.");
        }
        inPart = true;
        return headers;
    }

    /** The current part's content, up to the next delimiter. Read it before asking for the next part. */
    public InputStream content() {
        if (!inPart) throw new IllegalStateException("no part");
        return current == null ? current = new Content() : current;
    }

    private static void drain(InputStream s) {
        try {
            s.transferTo(OutputStreamNull.INSTANCE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A header line without its CRLF, at most 8 KB. */
    private String line() {
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (!fill(1)) throw new Malformed("The multipart body ends inside a part's headers.");
            byte b = buf[pos++];
            if (b == '\n') {
                int n = sb.length();
                if (n > 0 && sb.charAt(n - 1) == '\r') sb.setLength(n - 1);
                return sb.toString();
            }
            sb.append((char) (b & 0xff));
            if (sb.length() > 8192) throw new Malformed("A multipart part header is too long.");
        }
    }

    /** Ensures {@code n} unread bytes in the window unless the body ends first; false if it did. */
    private boolean fill(int n) {
        if (lim - pos >= n) return true;
        System.arraycopy(buf, pos, buf, 0, lim - pos);
        lim -= pos;
        pos = 0;
        while (lim < n && !eof) {
            try {
                int r = in.read(buf, lim, buf.length - lim);
                if (r < 0) eof = true;
                else lim += r;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return lim - pos >= n;
    }

    private int indexOfDelimiter() {
        outer:
        for (int i = pos; i <= lim - delimiter.length; i++) {
            for (int j = 0; j < delimiter.length; j++) if (buf[i + j] != delimiter[j]) continue outer;
            return i;
        }
        return -1;
    }

    /** Bytes up to the next delimiter; then the reader stands just past it. */
    private final class Content extends InputStream {
        private boolean done;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] dst, int off, int len) {
            if (done) return -1;
            if (len == 0) return 0;
            fill(buf.length);
            int at = indexOfDelimiter();
            int safe;
            if (at >= 0) {
                safe = at - pos;
            } else {
                if (eof && lim - pos < delimiter.length) throw new Malformed("The multipart body is not closed.");
                safe = lim - pos - (delimiter.length - 1); // a delimiter may begin in the tail
            }
            if (safe == 0 && at >= 0) {
                pos += delimiter.length;
                done = true;
                current = null;
                inPart = false;
                return -1;
            }
            int n = Math.min(len, safe);
            System.arraycopy(buf, pos, dst, off, n);
            pos += n;
            return n;
        }
    }

    private static final class OutputStreamNull extends java.io.OutputStream {
        static final OutputStreamNull INSTANCE = new OutputStreamNull();

        @Override
        public void write(int b) {}

        @Override
        public void write(byte[] b, int off, int len) {}
    }
}
