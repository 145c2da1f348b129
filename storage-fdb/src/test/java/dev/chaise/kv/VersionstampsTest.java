package dev.chaise.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * Pins {@link Versionstamps} byte for byte to FoundationDB's documented format (API 520+): the
 * tuple's bytes with the incomplete versionstamp as type code {@code 0x33}, ten placeholder bytes
 * {@code 0xff} and a two-byte big-endian user version, then the four-byte little-endian offset of
 * the placeholder, counted from the start of the whole key (raw prefix included). Every expected
 * array here was worked out by hand from that description and the tuple layer's type codes, not
 * produced by the code under test.
 */
class VersionstampsTest {

    private static final String PLACEHOLDER = "ff ff ff ff ff ff ff ff ff ff";

    /** Hex bytes separated by spaces, e.g. {@code "70 2f 02"}. */
    private static byte[] hex(String spaced) {
        return HexFormat.of().parseHex(spaced.replace(" ", ""));
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) out.writeBytes(p);
        return out.toByteArray();
    }

    @Test
    void bareVersionstampWithoutPrefix() {
        byte[] packed = Versionstamps.packWithVersionstamp(new byte[0], Tuple.from(Versionstamp.incomplete(0)));
        // 0x33, ten 0xff, user version 0x0000 big-endian, offset 1 little-endian.
        assertArrayEquals(hex("33 " + PLACEHOLDER + " 00 00  01 00 00 00"), packed);
    }

    @Test
    void rawPrefixCountsTowardsTheOffset() {
        byte[] packed = Versionstamps.packWithVersionstamp(hex("70 2f"), Tuple.from("ab", Versionstamp.incomplete(0x0102)));
        // "p/" | string "ab" = 02 61 62 00 | 33 | placeholder | user version 01 02 (big-endian)
        // placeholder starts at 2 + 4 + 1 = 7.
        assertArrayEquals(hex("70 2f  02 61 62 00  33 " + PLACEHOLDER + " 01 02  07 00 00 00"), packed);
    }

    @Test
    void offsetIsLittleEndianOverFourBytes() {
        byte[] prefix = new byte[300];
        Arrays.fill(prefix, (byte) 0x01);
        byte[] packed = Versionstamps.packWithVersionstamp(prefix, Tuple.from(1L, Versionstamp.incomplete(7), "z"));
        // prefix (300) | int 1 = 15 01 | 33 | placeholder | 00 07 | string "z" = 02 7a 00
        // placeholder at 300 + 2 + 1 = 303 = 0x0000012f, little-endian 2f 01 00 00.
        byte[] expected = concat(prefix, hex("15 01  33 " + PLACEHOLDER + " 00 07  02 7a 00  2f 01 00 00"));
        assertArrayEquals(expected, packed);
    }

    @Test
    void elementsBeforeTheStampAreEncodedAsTheTupleLayerDoes() {
        // Nested tuple ("n") = 05 02 6e 00 00, then 33; user version 0xffff makes the whole 12-byte
        // stamp 0xff, so only a correct offset (5 + 1 = 6) tells where the placeholder is.
        byte[] packed = Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from(Tuple.from("n"), Versionstamp.incomplete(0xffff)));
        assertArrayEquals(hex("05 02 6e 00 00  33 " + PLACEHOLDER + " ff ff  06 00 00 00"), packed);

        // Byte string {00, ff}: 01, 00 escaped as 00 ff, ff, terminator 00 -> 01 00 ff ff 00; offset 6.
        byte[] packed2 = Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from(new byte[] {0x00, (byte) 0xff}, Versionstamp.incomplete(1)));
        assertArrayEquals(hex("01 00 ff ff 00  33 " + PLACEHOLDER + " 00 01  06 00 00 00"), packed2);
    }

    @Test
    void fillReplacesThePlaceholderAndDropsTheOffset() {
        byte[] packed = Versionstamps.packWithVersionstamp(hex("70 2f"), Tuple.from("ab", Versionstamp.incomplete(0x0102)));
        byte[] stamp = hex("0a 0b 0c 0d 0e 0f 10 11 12 13");
        byte[] filled = Versionstamps.fill(packed, stamp);
        assertArrayEquals(hex("70 2f  02 61 62 00  33 0a 0b 0c 0d 0e 0f 10 11 12 13 01 02"), filled);
        // And that is exactly what the tuple layer packs for the complete versionstamp.
        assertArrayEquals(concat(hex("70 2f"), Tuple.from("ab", Versionstamp.complete(stamp, 0x0102)).pack()), filled);
        Tuple back = Tuple.fromBytes(filled, 2, filled.length - 2);
        assertEquals(Versionstamp.complete(stamp, 0x0102), back.getVersionstamp(1));
    }

    @Test
    void transactionVersionstampIsBigEndianVersionThenBatchOrder() {
        byte[] stamp = Versionstamps.txVersionstamp(0x0102030405060708L, 0x090a);
        assertArrayEquals(hex("01 02 03 04 05 06 07 08 09 0a"), stamp);
        assertEquals(0x0102030405060708L, Versionstamps.commitVersion(stamp));
    }

    @Test
    void rejectsTuplesWithoutExactlyOneTopLevelIncompleteStamp() {
        assertThrows(IllegalArgumentException.class, () -> Versionstamps.packWithVersionstamp(new byte[0], Tuple.from("a", 1L)));
        assertThrows(IllegalArgumentException.class, () -> Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from(Versionstamp.incomplete(1), Versionstamp.incomplete(2))));
        assertThrows(IllegalArgumentException.class, () -> Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from("a", Tuple.from(Versionstamp.incomplete(1)))));
        assertThrows(IllegalArgumentException.class, () -> Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from(Versionstamp.complete(new byte[10], 0))));
    }

    @Test
    void fillRejectsOffsetsOutsideTheOperand() {
        KvException shortOperand = assertThrows(KvException.class, () -> Versionstamps.fill(hex("00 00 00"), new byte[10]));
        assertEquals(KvException.CLIENT_INVALID_OPERATION, shortOperand.code());
        // 12 bytes of payload, offset 3: 3 + 10 > 12.
        KvException past = assertThrows(KvException.class,
                () -> Versionstamps.fill(hex("00 00 00 00 00 00 00 00 00 00 00 00  03 00 00 00"), new byte[10]));
        assertEquals(KvException.CLIENT_INVALID_OPERATION, past.code());
        // Offset 2 fits exactly.
        assertArrayEquals(hex("aa bb 01 02 03 04 05 06 07 08 09 0a"),
                Versionstamps.fill(hex("aa bb 00 00 00 00 00 00 00 00 00 00  02 00 00 00"), hex("01 02 03 04 05 06 07 08 09 0a")));
    }
}
