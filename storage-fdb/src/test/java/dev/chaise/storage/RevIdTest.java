package dev.chaise.storage;


import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.storage.StorageException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class RevIdTest {

    static final String H = "9c6f4b1c2e3d4a5b6c7d8e9f0a1b2c3d";

    @Test
    void parsesAndFormatsCanonicalRevs() {
        RevId r = RevId.parse("3-" + H);
        assertEquals(3, r.pos());
        assertEquals(H, r.hash());
        assertEquals("3-" + H, r.toString());
        assertArrayEquals(HexFormat.of().parseHex(H), r.hashBytes());
        assertEquals(r, RevId.fromKey(3, r.hashBytes()));
    }

    @Test
    void anyHashTextRoundTripsExactly() {
        for (String rev : List.of(
                "1-abc",
                "1-" + H.toUpperCase(),
                "2-" + H + "00ff00ff", // 40 chars, like a SHA-1 revision
                "4-" + H.substring(1), // 31 chars
                "12-x-y", // only the first dash separates
                "5-h\u00e9llo",
                "6-\ud83d\ude00",
                "7-abcdefghijklmnop", // 16 bytes of text, not 16 raw bytes
                "8-a\u0000b")) {
            RevId r = RevId.parse(rev);
            assertEquals(rev, r.toString());
            assertEquals(r, RevId.fromKey(r.pos(), r.hashBytes()), rev);
        }
        assertEquals(9_223_372_036_854_775_807L, RevId.parse("9223372036854775807-a").pos());
    }

    @Test
    void leadingZerosInThePositionAreAccepted() {
        // CouchDB reads the position as an integer, so "007-x" is revision 7.
        assertEquals(RevId.of(7, "abc"), RevId.parse("007-abc"));
    }

    @Test
    void rejectsMalformedRevs() {
        for (String bad : Arrays.asList(
                null, "", "abc", "-1-x", "0-x", "00-x", "-x", "x-1", "1.5-abc", "+1-abc", " 1-abc",
                "1 -abc", "9223372036854775808-x", "99999999999999999999999-x", "1-\ud800", "1-a\udc00b")) {
            StorageException e = assertThrows(StorageException.class, () -> RevId.parse(bad), String.valueOf(bad));
            assertEquals(StorageException.Kind.BAD_REQUEST, e.kind());
            assertEquals("Invalid rev format", e.reason());
        }
        assertThrows(IllegalArgumentException.class, () -> RevId.of(0, "a"));
    }

    /** As CouchDB's parse_rev: "1-" is position 1 with an empty id, and its bytes round-trip. */
    @Test
    void anEmptyHashIsARevision() {
        assertEquals(RevId.of(1, ""), RevId.parse("1-"));
        assertEquals("", RevId.parseHash(""));
        assertEquals(0, RevId.encodeHash("").length);
        assertEquals("", RevId.decodeHash(new byte[0]));
        assertEquals("1-", RevId.parse("1-").toString());
    }

    @Test
    void hashBytesLayout() {
        assertEquals(16, RevId.encodeHash(H).length);
        assertArrayEquals("abc".getBytes(StandardCharsets.UTF_8), RevId.encodeHash("abc"));
        byte[] sixteen = RevId.encodeHash("abcdefghijklmnop");
        assertEquals(17, sixteen.length);
        assertEquals(0, sixteen[16]);
        assertEquals(33, RevId.encodeHash(H.toUpperCase()).length);
        assertThrows(IllegalArgumentException.class, () -> RevId.decodeHash("abcdefghijklmnopq".getBytes(StandardCharsets.UTF_8)));
        // A canonical hash must never come back from the text branch.
        byte[] textOfCanonical = Arrays.copyOf(H.getBytes(StandardCharsets.UTF_8), 33);
        assertThrows(IllegalArgumentException.class, () -> RevId.decodeHash(textOfCanonical));
        assertThrows(IllegalArgumentException.class, () -> RevId.decodeHash(new byte[] {(byte) 0xc3}));
    }

    @Test
    void revsOrderByPositionNumericallyThenHashBytes() {
        assertTrue(RevId.parse("10-0").compareTo(RevId.parse("9-f")) > 0);
        assertTrue(RevId.of(2, "ff" + H.substring(2)).compareTo(RevId.of(2, "00" + H.substring(2))) > 0);
        // Canonical hashes compare as their 16 bytes: "z" (0x7a) beats 0x79…, loses to 0x7b….
        assertTrue(RevId.compareHashes("z", "79" + H.substring(2)) > 0);
        assertTrue(RevId.compareHashes("z", "7b" + H.substring(2)) < 0);
        assertNotEquals(RevId.of(1, H), RevId.of(1, H.toUpperCase()));
    }

    @Test
    void textSpellingTheSameSixteenBytesAsACanonicalHashStaysDistinct() {
        // CouchDB would treat these as one revision; we keep both and sort the text just after.
        String text = "abcdefghijklmnop";
        String canonical = HexFormat.of().formatHex(text.getBytes(StandardCharsets.UTF_8));
        assertTrue(RevId.compareHashes(canonical, text) < 0);
        String next = HexFormat.of().formatHex("abcdefghijklmnoq".getBytes(StandardCharsets.UTF_8));
        assertTrue(RevId.compareHashes(text, next) < 0);
        assertNotEquals(RevId.of(1, canonical), RevId.of(1, text));
    }

    // ---- properties: the byte form is injective, invertible and orders like CouchDB ----

    @Provide
    Arbitrary<String> hashes() {
        Arbitrary<String> canonical = Arbitraries.strings().withChars("0123456789abcdef").ofLength(32);
        Arbitrary<String> nearCanonical = Arbitraries.strings().withChars("0123456789abcdefA").ofMinLength(15).ofMaxLength(33);
        Arbitrary<String> small = Arbitraries.strings().withChars("\u0000\u0001ab\u007f\u00e9\uffff").ofMinLength(1).ofMaxLength(20);
        Arbitrary<String> ascii16 = Arbitraries.strings().withCharRange('\u0000', '\u007f').ofLength(16);
        return Arbitraries.oneOf(canonical, nearCanonical, small, ascii16);
    }

    @Property(tries = 2000)
    void bytesRoundTrip(@ForAll("hashes") String h) {
        assertEquals(h, RevId.decodeHash(RevId.encodeHash(h)));
    }

    @Property(tries = 3000)
    void bytesAreInjectiveAndOrderLikeCouchDb(@ForAll("hashes") String a, @ForAll("hashes") String b) {
        byte[] ea = RevId.encodeHash(a);
        byte[] eb = RevId.encodeHash(b);
        assertEquals(a.equals(b), Arrays.equals(ea, eb));
        int ours = Integer.signum(Arrays.compareUnsigned(ea, eb));
        assertEquals(ours, RevId.compareHashes(a, b));
        if (keptVerbatimByCouchDb(a) && keptVerbatimByCouchDb(b)) {
            int couch = Integer.signum(Arrays.compareUnsigned(couchBinary(a), couchBinary(b)));
            if (couch != 0) assertEquals(couch, ours, a + " vs " + b);
        }
    }

    @Property(tries = 500)
    void sortingRevIdsSortsTheirKeyBytes(@ForAll List<@From("hashes") String> hs) {
        List<RevId> revs = new ArrayList<>();
        for (String h : hs) revs.add(RevId.of(1, h));
        List<RevId> byRev = new ArrayList<>(revs);
        byRev.sort(null);
        List<RevId> byBytes = new ArrayList<>(revs);
        byBytes.sort((x, y) -> Arrays.compareUnsigned(x.hashBytes(), y.hashBytes()));
        assertEquals(byBytes, byRev);
    }

    /** CouchDB decodes 32-char hex ids (any case) and rejects other 32-char ids. */
    static boolean keptVerbatimByCouchDb(String h) {
        return RevId.isCanonicalHash(h) || h.length() != 32;
    }

    /** The binary CouchDB holds for a revision id, which its winner selection compares. */
    static byte[] couchBinary(String h) {
        return RevId.isCanonicalHash(h) ? HexFormat.of().parseHex(h) : h.getBytes(StandardCharsets.UTF_8);
    }
}
