package dev.chaise.replicator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MultipartStreamTest {
    /** Hands out at most {@code step} bytes per read, as a network does. */
    static InputStream trickle(byte[] b, int step) {
        return new ByteArrayInputStream(b) {
            @Override
            public synchronized int read(byte[] dst, int off, int len) {
                return super.read(dst, off, Math.min(len, step));
            }
        };
    }

    static byte[] body(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("preamble\r\n".getBytes());
        for (byte[] p : parts) {
            out.writeBytes("--b0undary\r\nContent-Type: x/y\r\n\r\n".getBytes());
            out.writeBytes(p);
            out.writeBytes("\r\n".getBytes());
        }
        out.writeBytes("--b0undary--".getBytes());
        return out.toByteArray();
    }

    @Test
    void partsOfAnySizeThroughAnyReadSize() throws Exception {
        Random rnd = new Random(3);
        for (int step : new int[] {1, 7, 4096, 1 << 20}) {
            byte[] big = new byte[300_000];
            rnd.nextBytes(big);
            // Near misses of the delimiter inside the content must pass through (the delimiter itself never appears, RFC 2046).
            byte[] tricky = "a\r\n--b0undar\r\n-b0undary--b0undary\r\n".getBytes(StandardCharsets.ISO_8859_1);
            byte[][] parts = step == 1 ? new byte[][] {"{}".getBytes(), tricky, new byte[0]} : new byte[][] {"{}".getBytes(), big, tricky, new byte[0]};
            MultipartStream m = new MultipartStream(trickle(body(parts), step), "b0undary");
            for (byte[] p : parts) {
                assertEquals("x/y", m.nextPart().get("content-type"));
                assertArrayEquals(p, m.content().readAllBytes(), "step " + step);
            }
            assertNull(m.nextPart());
        }
    }

    @Test
    void unreadPartsAreSkippedAndTheBodyMayStartWithItsDelimiter() throws Exception {
        byte[] b = "--q\r\n\r\none\r\n--q\r\nA: b\r\n\r\ntwo\r\n--q--\r\n".getBytes();
        MultipartStream m = new MultipartStream(new ByteArrayInputStream(b), "q");
        m.nextPart();
        assertEquals("b", m.nextPart().get("a"));
        assertEquals("two", new String(m.content().readAllBytes()));
        assertNull(m.nextPart());
    }

    @Test
    void malformedBodiesAre400() {
        assertThrows(MultipartStream.Malformed.class, () -> {
            MultipartStream m = new MultipartStream(new ByteArrayInputStream("--q\r\n\r\nunclosed".getBytes()), "q");
            m.nextPart();
            m.content().readAllBytes();
        });
        assertThrows(MultipartStream.Malformed.class, () -> new MultipartStream(new ByteArrayInputStream("no delimiter".getBytes()), "q").nextPart());
        assertThrows(MultipartStream.Malformed.class, () -> MultipartStream.boundary("multipart/related"));
    }
}
