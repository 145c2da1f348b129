package dev.chaise.storage;

import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.StorageException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A revision identifier {@code "pos-hash"}: {@code pos >= 1} is the edit depth, {@code hash} is the
 * hash text exactly as it was received, so revisions from any replicator round-trip byte-exact.
 *
 * <h2>Hash bytes (RFC C's RevHash)</h2>
 * {@link #encodeHash} maps hash text to bytes; {@link #decodeHash} inverts it:
 * <ul>
 *   <li>canonical hash (exactly 32 lowercase hex chars, what CouchDB and PouchDB generate):
 *       the 16 raw bytes;
 *   <li>any other text shorter than 16 UTF-8 bytes: its UTF-8 bytes;
 *   <li>any other text of 16 or more UTF-8 bytes: its UTF-8 bytes followed by one {@code 0x00}
 *       (so nothing but a canonical hash encodes to exactly 16 bytes and decoding is unambiguous).
 * </ul>
 * Unsigned comparison of these bytes orders hashes as CouchDB does when it picks a winner: CouchDB
 * compares the revision ids as Erlang binaries, i.e. the 16 decoded bytes for 32-hex ids and the
 * raw bytes otherwise. The {@code 0x00} suffix only changes the order of a non-canonical text
 * against a canonical hash whose 16 bytes equal it, a pair CouchDB considers the same revision.
 *
 * <p>Deviation, on purpose: CouchDB normalises 32-char uppercase hex to lowercase and rejects
 * 32-char non-hex ids; it also re-prints any 16-byte id as hex. Here every such text is kept as is.
 */
public final class RevId implements Comparable<RevId> {

    public static final String INVALID = "Invalid rev format";
    private static final HexFormat HEX = HexFormat.of();

    private final long pos;
    private final String hash;
    /** {@link #encodeHash} of {@code hash}, computed once: every write packs it into 3-4 keys and values. */
    private byte[] hashBytes;
    private String text;

    public RevId(long pos, String hash) {
        if (pos < 1) throw new IllegalArgumentException("rev pos must be >= 1, was " + pos);
        if (!isValidHash(hash)) throw new IllegalArgumentException("invalid rev hash: " + hash);
        this.pos = pos;
        this.hash = hash;
    }

    public long pos() {
        return pos;
    }

    public String hash() {
        return hash;
    }

    public static RevId of(long pos, String hash) {
        return new RevId(pos, hash);
    }

    /** Parses {@code "3-9c6f…"}; any malformed input is a BAD_REQUEST "Invalid rev format". */
    public static RevId parse(String rev) {
        if (rev == null) throw StorageException.badRequest(INVALID);
        int dash = rev.indexOf('-');
        if (dash <= 0) throw StorageException.badRequest(INVALID);
        long pos = 0;
        for (int i = 0; i < dash; i++) {
            char c = rev.charAt(i);
            if (c < '0' || c > '9') throw StorageException.badRequest(INVALID);
            if (pos > (Long.MAX_VALUE - (c - '0')) / 10) throw StorageException.badRequest(INVALID);
            pos = pos * 10 + (c - '0');
        }
        String hash = rev.substring(dash + 1);
        if (pos < 1 || !isValidHash(hash)) throw StorageException.badRequest(INVALID);
        return new RevId(pos, hash);
    }

    /** As {@link #parse} but for a hash that arrives on its own, e.g. in {@code _revisions.ids}. */
    public static String parseHash(String hash) {
        if (!isValidHash(hash)) throw StorageException.badRequest(INVALID);
        return hash;
    }

    /** A new revision from its 16-byte digest: the canonical hash, whose RevHash bytes are the digest itself. */
    public static RevId fromDigest(long pos, byte[] digest) {
        if (digest.length != 16) throw new IllegalArgumentException("a digest is 16 bytes");
        RevId r = new RevId(pos, hex(digest));
        r.hashBytes = digest;
        return r;
    }

    private static final char[] HEX_DIGITS = "0123456789abcdef".toCharArray();

    /** Lowercase hex; HexFormat's general path was a visible cost per document. */
    private static String hex(byte[] b) {
        char[] out = new char[b.length * 2];
        for (int i = 0; i < b.length; i++) {
            out[2 * i] = HEX_DIGITS[(b[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX_DIGITS[b[i] & 0xf];
        }
        return new String(out);
    }

    /** The rev rebuilt from a stored key's position and hash bytes. */
    public static RevId fromKey(long pos, byte[] hashBytes) {
        return new RevId(pos, decodeHash(hashBytes));
    }

    /** The RevHash bytes of RFC C; shared, so callers must not modify them. */
    public byte[] hashBytes() {
        byte[] b = hashBytes;
        if (b == null) hashBytes = b = encodeHash(hash); // a benign race: every thread computes the same bytes
        return b;
    }

    /**
     * A hash may be any text that is well-formed Unicode (so UTF-8 round-trips), the empty text
     * included: CouchDB reads {@code "1-"} as position 1 with an empty id (PouchDB's issue 7829
     * replicates such revisions).
     */
    public static boolean isValidHash(String hash) {
        return hash != null && TupleBytes.wellFormed(hash);
    }

    public static boolean isCanonicalHash(String hash) {
        if (hash.length() != 32) return false;
        for (int i = 0; i < 32; i++) {
            char c = hash.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
        }
        return true;
    }

    public static byte[] encodeHash(String hash) {
        if (isCanonicalHash(hash)) return HEX.parseHex(hash);
        if (!isValidHash(hash)) throw new IllegalArgumentException("invalid rev hash: " + hash);
        byte[] utf8 = hash.getBytes(StandardCharsets.UTF_8);
        return utf8.length < 16 ? utf8 : Arrays.copyOf(utf8, utf8.length + 1);
    }

    public static String decodeHash(byte[] bytes) {
        Objects.requireNonNull(bytes);
        String hash;
        if (bytes.length == 16) {
            return hex(bytes);
        } else if (bytes.length < 16) {
            hash = new String(bytes, StandardCharsets.UTF_8);
        } else {
            if (bytes[bytes.length - 1] != 0) throw new IllegalArgumentException("malformed rev hash bytes");
            hash = new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
        }
        if (!isValidHash(hash) || isCanonicalHash(hash) || !Arrays.equals(encodeHash(hash), bytes)) {
            throw new IllegalArgumentException("malformed rev hash bytes");
        }
        return hash;
    }

    /** Orders hashes as their {@link #encodeHash bytes} compare unsigned. */
    public static int compareHashes(String a, String b) {
        if (a.equals(b)) return 0;
        // Lowercase hex text sorts exactly like the bytes it spells.
        if (isCanonicalHash(a) && isCanonicalHash(b)) return Integer.signum(a.compareTo(b));
        return Integer.signum(Arrays.compareUnsigned(encodeHash(a), encodeHash(b)));
    }

    /** By position, then by hash bytes: CouchDB's {Pos, RevId} term order. */
    @Override
    public int compareTo(RevId o) {
        int c = Long.compare(pos, o.pos);
        return c != 0 ? c : compareHashes(hash, o.hash);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RevId r && r.pos == pos && r.hash.equals(hash);
    }

    @Override
    public int hashCode() {
        return 31 * Long.hashCode(pos) + hash.hashCode();
    }

    @Override
    public String toString() {
        String t = text;
        if (t == null) text = t = pos + "-" + hash; // a benign race, as hashBytes; written into results, txids and responses
        return t;
    }
}
