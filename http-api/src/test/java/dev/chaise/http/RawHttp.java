package dev.chaise.http;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A bare HTTP/1.1 connection, for what java.net.http hides: pipelining, Expect, HEAD framing, disconnects. */
final class RawHttp implements AutoCloseable {
    final Socket socket;
    final InputStream in;
    final OutputStream out;

    record Resp(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        in = new BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    RawHttp send(String raw) throws IOException {
        out.write(raw.getBytes(StandardCharsets.UTF_8));
        out.flush();
        return this;
    }

    Resp read() throws IOException {
        return read(false);
    }

    /** Reads one response; {@code head} says it answers a HEAD (no body whatever the headers say). */
    Resp read(boolean head) throws IOException {
        String status = line();
        if (status == null) throw new IOException("connection closed");
        int code = Integer.parseInt(status.split(" ")[1]);
        Map<String, String> h = new LinkedHashMap<>();
        for (String l; !(l = line()).isEmpty(); ) {
            int c = l.indexOf(':');
            h.merge(l.substring(0, c).strip().toLowerCase(Locale.ROOT), l.substring(c + 1).strip(), (a, b) -> a + "\n" + b);
        }
        if (head || code == 100 || code == 204 || code == 304) return new Resp(code, h, "");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(h.get("transfer-encoding"))) {
            while (true) {
                int n = Integer.parseInt(line().strip(), 16);
                if (n == 0) {
                    while (!line().isEmpty()) { } // trailers
                    break;
                }
                body.write(in.readNBytes(n));
                line();
            }
        } else if (h.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(h.get("content-length"))));
        } else {
            body.write(in.readAllBytes());
        }
        return new Resp(code, h, body.toString(StandardCharsets.UTF_8));
    }

    String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') break;
            if (c != '\r') b.write(c);
        }
        if (c == -1 && b.size() == 0) return null;
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    /** True if the server closed the connection (reads end), within the socket timeout. */
    boolean closedByServer() {
        try {
            return in.read() == -1;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
