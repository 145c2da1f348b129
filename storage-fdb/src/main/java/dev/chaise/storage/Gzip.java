package dev.chaise.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;

/**
 * Gzip as streams in both directions, so an attachment of any size is compressed as it is stored and
 * decompressed as it is served, a buffer at a time. The encoder writes the header zlib writes for
 * CouchDB (no name, no time, Unix), so the same bytes at the same level come out alike.
 */
public final class Gzip {
    private static final int BUFFER = 65_536;

    private Gzip() {}

    /** The gzip encoding of {@code identity} at {@code level}, read as it is produced. */
    static Encoder encode(InputStream identity, int level) {
        return new Encoder(identity, level);
    }

    /** The identity bytes of a gzip stream. */
    public static InputStream decode(InputStream gzip) {
        try {
            return new GZIPInputStream(gzip, BUFFER);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A gzip stream over identity bytes; {@link #identityLength} once it has ended. */
    static final class Encoder extends InputStream {
        private final InputStream in;
        private final Deflater deflater;
        private final CRC32 crc = new CRC32();
        private final byte[] input = new byte[BUFFER];
        private byte[] out = new byte[BUFFER];
        private int pos;
        private int limit;
        private long identityLength;
        private boolean inputDone;
        private boolean trailerSent;

        private Encoder(InputStream in, int level) {
            this.in = in;
            this.deflater = new Deflater(level, true);
            // magic, deflate, no flags, no mtime; extra flags as zlib sets them for the level; OS Unix
            byte xfl = (byte) (level == 9 ? 2 : level < 2 ? 4 : 0);
            System.arraycopy(new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, xfl, 3}, 0, out, 0, 10);
            limit = 10;
        }

        long identityLength() {
            return identityLength;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) return 0;
            while (pos >= limit) {
                if (!fill()) return -1;
            }
            int n = Math.min(len, limit - pos);
            System.arraycopy(out, pos, b, off, n);
            pos += n;
            return n;
        }

        /** Produces the next bytes into {@code out}; false at the end. */
        private boolean fill() throws IOException {
            pos = 0;
            limit = 0;
            while (limit == 0) {
                if (deflater.finished()) {
                    if (trailerSent) return false;
                    trailerSent = true;
                    long c = crc.getValue();
                    for (int i = 0; i < 4; i++) out[i] = (byte) (c >>> (8 * i));
                    for (int i = 0; i < 4; i++) out[4 + i] = (byte) (identityLength >>> (8 * i));
                    limit = 8;
                    deflater.end();
                    return true;
                }
                if (deflater.needsInput() && !inputDone) {
                    int n = in.read(input);
                    if (n < 0) {
                        inputDone = true;
                        deflater.finish();
                    } else if (n > 0) {
                        crc.update(input, 0, n);
                        identityLength += n;
                        deflater.setInput(input, 0, n);
                    }
                    continue;
                }
                limit = deflater.deflate(out);
            }
            return true;
        }

        @Override
        public void close() throws IOException {
            if (!trailerSent) deflater.end();
            in.close();
        }
    }
}
