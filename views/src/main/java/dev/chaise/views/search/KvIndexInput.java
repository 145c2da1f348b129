package dev.chaise.views.search;

import java.io.EOFException;
import java.io.IOException;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.RandomAccessInput;
import org.apache.lucene.util.BitUtil;

/**
 * A file (or a slice of one) of a {@link KvDirectory}, read block by block through the directory's cache.
 *
 * <p>Shorts, ints and longs inside the current block are read in one step, and the input is its
 * own {@link RandomAccessInput}: doc values and postings read that way for every hit (sorting by
 * id, facets), and Lucene's fallback would seek and assemble each value a byte at a time.
 */
final class KvIndexInput extends IndexInput implements RandomAccessInput {
    private static final int BS = SearchSubspace.BLOCK_SIZE;
    private final KvDirectory dir;
    private final long fileId;
    private final long offset; // of this slice in the file
    private final long length;
    private final long lastBlock; // of the file's bytes this slice may touch
    private long pos; // in the slice
    private byte[] block;
    private long blockNo = -1;

    KvIndexInput(String description, KvDirectory dir, long fileId, long offset, long length) {
        super(description);
        this.dir = dir;
        this.fileId = fileId;
        this.offset = offset;
        this.length = length;
        this.lastBlock = length == 0 ? offset / BS : (offset + length - 1) / BS;
    }

    /** Makes the block holding slice position {@code p} current; @return the index of {@code p} in it */
    private int load(long p) {
        long abs = offset + p;
        long n = abs / BS;
        if (n != blockNo) {
            block = dir.block(fileId, n, lastBlock);
            blockNo = n;
        }
        return (int) (abs % BS);
    }

    /** The index in the current block of {@code size} bytes at slice position {@code p}, or -1 if they span two blocks. */
    private int within(long p, int size) throws EOFException {
        if (p < 0 || p > length - size) throw new EOFException("read past EOF (" + p + "+" + size + "): " + this);
        int in = load(p);
        return in <= BS - size ? in : -1;
    }

    @Override
    public byte readByte() throws IOException {
        if (pos >= length) throw new EOFException("read past EOF: " + this);
        int in = load(pos++); // before reading the field: load may replace the block
        return block[in];
    }

    @Override
    public void readBytes(byte[] b, int off, int len) throws IOException {
        if (len > length - pos) throw new EOFException("read past EOF: " + this);
        while (len > 0) {
            int in = load(pos);
            int n = Math.min(len, BS - in);
            System.arraycopy(block, in, b, off, n);
            pos += n;
            off += n;
            len -= n;
        }
    }

    @Override
    public short readShort() throws IOException {
        int in = within(pos, Short.BYTES);
        if (in < 0) return super.readShort();
        pos += Short.BYTES;
        return (short) BitUtil.VH_LE_SHORT.get(block, in);
    }

    @Override
    public int readInt() throws IOException {
        int in = within(pos, Integer.BYTES);
        if (in < 0) return super.readInt();
        pos += Integer.BYTES;
        return (int) BitUtil.VH_LE_INT.get(block, in);
    }

    @Override
    public long readLong() throws IOException {
        int in = within(pos, Long.BYTES);
        if (in < 0) return super.readLong();
        pos += Long.BYTES;
        return (long) BitUtil.VH_LE_LONG.get(block, in);
    }

    // RandomAccessInput: reads at a position, leaving the input's own position where it was.

    @Override
    public byte readByte(long p) throws IOException {
        if (p < 0 || p >= length) throw new EOFException("read past EOF (" + p + "): " + this);
        int in = load(p);
        return block[in];
    }

    @Override
    public short readShort(long p) throws IOException {
        int in = within(p, Short.BYTES);
        if (in >= 0) return (short) BitUtil.VH_LE_SHORT.get(block, in);
        return (short) ((readByte(p) & 0xFF) | (readByte(p + 1) & 0xFF) << 8);
    }

    @Override
    public int readInt(long p) throws IOException {
        int in = within(p, Integer.BYTES);
        if (in >= 0) return (int) BitUtil.VH_LE_INT.get(block, in);
        return (readShort(p) & 0xFFFF) | readShort(p + 2) << 16;
    }

    @Override
    public long readLong(long p) throws IOException {
        int in = within(p, Long.BYTES);
        if (in >= 0) return (long) BitUtil.VH_LE_LONG.get(block, in);
        return (readInt(p) & 0xFFFFFFFFL) | ((long) readInt(p + 4)) << 32;
    }

    @Override
    public long getFilePointer() {
        return pos;
    }

    @Override
    public void seek(long p) throws IOException {
        if (p < 0 || p > length) throw new EOFException("seek past EOF (" + p + "): " + this);
        pos = p;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public IndexInput slice(String sliceDescription, long off, long len) throws IOException {
        if (off < 0 || len < 0 || off + len > length) throw new IllegalArgumentException("slice out of bounds: " + sliceDescription);
        return new KvIndexInput(getFullSliceDescription(sliceDescription), dir, fileId, offset + off, len);
    }

    @Override
    public KvIndexInput clone() {
        return (KvIndexInput) super.clone(); // same position and block; the block is never written
    }

    @Override
    public void close() {
        // nothing held: blocks belong to the cache
    }
}
