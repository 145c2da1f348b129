package dev.chaise.views.search;

import java.io.EOFException;
import java.io.IOException;
import org.apache.lucene.store.IndexInput;

/** A file (or a slice of one) of a {@link KvDirectory}, read block by block through the directory's cache. */
final class KvIndexInput extends IndexInput {
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

    private void load(long abs) {
        long n = abs / BS;
        if (n != blockNo) {
            block = dir.block(fileId, n, lastBlock);
            blockNo = n;
        }
    }

    @Override
    public byte readByte() throws IOException {
        if (pos >= length) throw new EOFException("read past EOF: " + this);
        long abs = offset + pos;
        load(abs);
        pos++;
        return block[(int) (abs % BS)];
    }

    @Override
    public void readBytes(byte[] b, int off, int len) throws IOException {
        if (len > length - pos) throw new EOFException("read past EOF: " + this);
        while (len > 0) {
            long abs = offset + pos;
            load(abs);
            int in = (int) (abs % BS);
            int n = Math.min(len, BS - in);
            System.arraycopy(block, in, b, off, n);
            pos += n;
            off += n;
            len -= n;
        }
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
