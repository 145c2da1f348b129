package dev.chaise.storage;

import java.io.InputStream;
import java.util.List;

/**
 * An attachment's stored bytes as a stream, its chunks read a few per transaction (chunks never
 * change), so a body of any size passes through a few hundred KB.
 */
final class ChunkStream extends InputStream {
    private static final int CHUNKS_PER_READ = 4;
    private final Database db;
    private final String docId;
    private final String digest;
    private long next;
    private byte[] chunk = new byte[0];
    private int pos;
    private List<byte[]> pending = List.of();
    private int pendingAt;
    private boolean end;

    ChunkStream(Database db, String docId, String digest) {
        this.db = db;
        this.docId = docId;
        this.digest = digest;
    }

    private boolean ensure() {
        while (pos >= chunk.length) {
            if (pendingAt < pending.size()) {
                chunk = pending.get(pendingAt++);
                pos = 0;
                continue;
            }
            if (end) return false;
            pending = db.attachmentChunks(docId, digest, next, CHUNKS_PER_READ);
            pendingAt = 0;
            next += pending.size();
            if (pending.size() < CHUNKS_PER_READ) end = true;
            if (pending.isEmpty()) return false;
        }
        return true;
    }

    @Override
    public int read() {
        return ensure() ? chunk[pos++] & 0xff : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) return 0;
        if (!ensure()) return -1;
        int n = Math.min(len, chunk.length - pos);
        System.arraycopy(chunk, pos, b, off, n);
        pos += n;
        return n;
    }
}
