package dev.chaise.kv;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Versionstamped key and value packing, done here rather than by {@code Tuple.packWithVersionstamp},
 * which loads {@code libfdb_c} to learn the API version and so cannot run on the embedded backend.
 *
 * <p>Format (FDB API version 520 and later): the tuple's bytes with the incomplete versionstamp
 * (type code {@code 0x33}, ten placeholder bytes, two-byte big-endian user version), followed by the
 * four-byte little-endian offset of the ten placeholder bytes.
 */
public final class Versionstamps {
    public static final int TX_BYTES = 10;
    /** The little-endian position a versionstamped operand ends with. */
    public static final int OFFSET_BYTES = 4;
    public static final int FULL_BYTES = 12;
    private static final byte[] VERSIONSTAMP_CODE = {0x33};

    private Versionstamps() {}

    /** {@code prefix + tuple} with the tuple's one top-level incomplete versionstamp, plus its offset. */
    public static byte[] packWithVersionstamp(byte[] prefix, Tuple tuple) {
        int offset = -1;
        // Not sized by tuple.getPackedSize(): with an incomplete versionstamp that asks FDB.instance()
        // for the API version, which loads libfdb_c.
        TupleBytes out = TupleBytes.startingWith(prefix, 48);
        // A top-level tuple packs as the concatenation of its elements' encodings.
        for (Object item : tuple.getItems()) {
            if (item instanceof Versionstamp vs && !vs.isComplete()) {
                if (offset >= 0) throw new IllegalArgumentException("more than one incomplete versionstamp in tuple");
                out.raw(VERSIONSTAMP_CODE);
                offset = out.length();
                out.raw(vs.getBytes());
            } else {
                if (item instanceof Tuple nested && nested.hasIncompleteVersionstamp()) {
                    throw new IllegalArgumentException("incomplete versionstamp must be a top-level element");
                }
                out.add(item);
            }
        }
        if (offset < 0) throw new IllegalArgumentException("no incomplete versionstamp in tuple");
        return out.raw(new byte[] {(byte) offset, (byte) (offset >>> 8), (byte) (offset >>> 16), (byte) (offset >>> 24)}).toArray();
    }

    /**
     * Resolves a versionstamped operand: cuts the trailing offset and writes the 10-byte
     * transaction versionstamp at it. Used by the embedded engine at commit.
     */
    public static byte[] fill(byte[] withOffset, byte[] txVersionstamp) {
        if (withOffset.length < OFFSET_BYTES) throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: versionstamp operand too short");
        int n = withOffset.length - OFFSET_BYTES;
        int offset = ByteBuffer.wrap(withOffset, n, OFFSET_BYTES).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (offset < 0 || offset + TX_BYTES > n) {
            throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: versionstamp offset out of range");
        }
        byte[] out = Arrays.copyOf(withOffset, n);
        System.arraycopy(txVersionstamp, 0, out, offset, TX_BYTES);
        return out;
    }

    /** The 10-byte transaction versionstamp: the commit version (big-endian) and the order in the batch. */
    public static byte[] txVersionstamp(long commitVersion, int batchOrder) {
        return ByteBuffer.allocate(TX_BYTES).putLong(commitVersion).putShort((short) batchOrder).array();
    }

    public static long commitVersion(byte[] txVersionstamp) {
        return ByteBuffer.wrap(txVersionstamp).getLong();
    }
}
