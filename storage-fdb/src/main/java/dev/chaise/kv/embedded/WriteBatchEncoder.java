package dev.chaise.kv.embedded;

import java.util.Arrays;
import org.rocksdb.WriteBatch;

/**
 * Builds a RocksDB WriteBatch in its serialized form (WriteBatch::rep_) on the Java side and
 * hands it over in one JNI call. Through the WriteBatch API each key was its own JNI crossing
 * with two array copies, a third of the resolver's time on bulk loads. The format, from
 * RocksDB's write_batch.cc:
 *
 * <pre>
 * rep     := sequence: fixed64 (0, RocksDB assigns it), count: fixed32, record*
 * record  := 0x01 key value                  put, default column family
 *          | 0x00 key                        delete, default column family
 *          | 0x0F begin end                  range delete, default column family
 *          | 0x05 cf:varint32 key value      put, another column family (0x04 delete, 0x0E range delete)
 * key, value, begin, end := len: varint32, bytes
 * </pre>
 *
 * Column families are given by id ({@code ColumnFamilyHandle.getID()}, itself a JNI call, so
 * callers look it up once). {@code WriteBatchEncoderTest} checks the bytes against the ones RocksDB's own API produces.
 */
final class WriteBatchEncoder {
    private static final byte DELETION = 0x00;
    private static final byte VALUE = 0x01;
    private static final byte CF_DELETION = 0x04;
    private static final byte CF_VALUE = 0x05;
    private static final byte CF_RANGE_DELETION = 0x0E;
    private static final byte RANGE_DELETION = 0x0F;
    private static final int HEADER = 12;

    private byte[] buf;
    private int len = HEADER;
    private int count;
    private boolean rangeDeletions;

    /** {@code capacity}: the records' bytes, if known (then the batch is handed over without a copy). */
    WriteBatchEncoder(int capacity) {
        buf = new byte[capacity + HEADER];
    }

    void put(int cf, byte[] key, byte[] value) {
        tag(cf, VALUE, CF_VALUE);
        string(key);
        string(value);
    }

    void delete(int cf, byte[] key) {
        tag(cf, DELETION, CF_DELETION);
        string(key);
    }

    void deleteRange(int cf, byte[] begin, byte[] end) {
        rangeDeletions = true;
        tag(cf, RANGE_DELETION, CF_RANGE_DELETION);
        string(begin);
        string(end);
    }

    /** The bytes a put takes in the batch, or a delete with {@code valueLength} -1. */
    static int recordBytes(int cf, int keyLength, int valueLength) {
        return 1 + (cf == 0 ? 0 : varintBytes(cf)) + varintBytes(keyLength) + keyLength + (valueLength < 0 ? 0 : varintBytes(valueLength) + valueLength);
    }

    /** The bytes a range deletion takes in the batch. */
    static int rangeBytes(int cf, int beginLength, int endLength) {
        return recordBytes(cf, beginLength, endLength);
    }

    private static int varintBytes(int v) {
        int n = 1;
        while ((v & ~0x7f) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    /** The records: RocksDB gives each its own sequence number. */
    int count() {
        return count;
    }

    boolean hasRangeDeletions() {
        return rangeDeletions;
    }

    /** The bytes the batch has room for, header included: {@link #size()} when it was sized exactly (for tests). */
    int capacity() {
        return buf.length;
    }

    /** The serialized batch's length in bytes. */
    int size() {
        return len;
    }

    /** The serialized batch (RocksDB copies it); the caller closes the WriteBatch. */
    WriteBatch toWriteBatch() {
        buf[8] = (byte) count;
        buf[9] = (byte) (count >>> 8);
        buf[10] = (byte) (count >>> 16);
        buf[11] = (byte) (count >>> 24);
        return new WriteBatch(len == buf.length ? buf : Arrays.copyOf(buf, len));
    }

    private void tag(int id, byte defaultTag, byte cfTag) {
        ensure(id == 0 ? 1 : 1 + varintBytes(id)); // exactly: a batch sized right is handed over as it is
        if (id == 0) {
            buf[len++] = defaultTag;
        } else {
            buf[len++] = cfTag;
            varint(id);
        }
        count++;
    }

    private void string(byte[] b) {
        ensure(varintBytes(b.length) + b.length);
        varint(b.length);
        System.arraycopy(b, 0, buf, len, b.length);
        len += b.length;
    }

    private void varint(int v) {
        while ((v & ~0x7f) != 0) {
            buf[len++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        buf[len++] = (byte) v;
    }

    private void ensure(int more) {
        if (len + more > buf.length) buf = Arrays.copyOf(buf, Math.max(len + more, buf.length * 2));
    }
}
