package dev.chaise.storage;

import com.apple.foundationdb.tuple.Versionstamp;
import java.util.HexFormat;

/**
 * RFC D's Sequence: the database's Incarnation and a commit's 12-byte Versionstamp. Shown to
 * clients as 26 lowercase hex digits (two for the incarnation), which sort as the sequences do.
 */
public record Sequence(int incarnation, Versionstamp versionstamp) implements Comparable<Sequence> {
    public static final int HEX_LENGTH = 26;
    private static final HexFormat HEX = HexFormat.of();

    public Sequence {
        if (incarnation < 0 || incarnation > 255) throw new IllegalArgumentException("incarnation must fit one byte");
        if (!versionstamp.isComplete()) throw new IllegalArgumentException("a sequence needs a complete versionstamp");
    }

    public String toHex() {
        // Not String.format: a feed writes one per row, and the format was 3 % of its CPU (issue 27).
        byte[] all = new byte[1 + 12];
        all[0] = (byte) incarnation;
        System.arraycopy(versionstamp.getBytes(), 0, all, 1, 12);
        return HEX.formatHex(all);
    }

    /** Parses {@link #toHex()}; throws BAD_REQUEST for anything else. */
    public static Sequence parse(String hex) {
        if (hex == null || hex.length() != HEX_LENGTH || !hex.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw StorageException.badRequest("Malformed sequence supplied in 'since' parameter.");
        }
        byte[] b = HEX.parseHex(hex);
        byte[] vs = java.util.Arrays.copyOfRange(b, 1, b.length);
        return new Sequence(b[0] & 0xff, Versionstamp.fromBytes(vs));
    }

    /** The sequence a changes cursor's continuation names ({@link Database#changes}). */
    public static Sequence fromContinuation(byte[] continuation) {
        com.apple.foundationdb.tuple.Tuple t = com.apple.foundationdb.tuple.Tuple.fromBytes(continuation);
        return new Sequence((int) t.getLong(0), t.getVersionstamp(1));
    }

    @Override
    public int compareTo(Sequence o) {
        int c = Integer.compare(incarnation, o.incarnation);
        return c != 0 ? c : versionstamp.compareTo(o.versionstamp);
    }

    @Override
    public String toString() {
        return toHex();
    }
}
