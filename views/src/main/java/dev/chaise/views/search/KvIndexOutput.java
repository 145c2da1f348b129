package dev.chaise.views.search;

import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.apache.lucene.store.BufferedChecksum;
import org.apache.lucene.store.IndexOutput;

/** A file being written to a {@link KvDirectory}: full blocks go out a megabyte per transaction, the rest and the length on close. */
final class KvIndexOutput extends IndexOutput {
    private static final int BS = SearchSubspace.BLOCK_SIZE;
    private final KvDirectory dir;
    private final long fileId;
    private final BufferedChecksum crc = new BufferedChecksum(new CRC32());
    private final List<byte[]> pending = new ArrayList<>();
    private long firstPending; // the block number of pending's first
    private byte[] block = new byte[BS];
    private int used;
    private long written;
    private boolean closed;

    KvIndexOutput(KvDirectory dir, String name, long fileId) {
        super("KvIndexOutput(" + name + ")", name);
        this.dir = dir;
        this.fileId = fileId;
    }

    @Override
    public void writeByte(byte b) {
        if (used == BS) nextBlock();
        block[used++] = b;
        crc.update(b);
        written++;
    }

    @Override
    public void writeBytes(byte[] b, int offset, int length) {
        crc.update(b, offset, length);
        written += length;
        while (length > 0) {
            if (used == BS) nextBlock();
            int n = Math.min(length, BS - used);
            System.arraycopy(b, offset, block, used, n);
            used += n;
            offset += n;
            length -= n;
        }
    }

    private void nextBlock() {
        pending.add(block);
        block = new byte[BS];
        used = 0;
        if ((long) pending.size() * BS >= KvDirectory.FLUSH_BYTES) flush(-1);
    }

    private void flush(long closedLength) {
        dir.writeBlocks(getName(), fileId, firstPending, pending, closedLength);
        firstPending += pending.size();
        pending.clear();
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (used > 0) pending.add(java.util.Arrays.copyOf(block, used));
        flush(written);
        block = null;
    }

    @Override
    public long getFilePointer() {
        return written;
    }

    @Override
    public long getChecksum() {
        return crc.getValue();
    }
}
