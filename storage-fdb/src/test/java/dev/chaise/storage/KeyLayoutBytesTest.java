package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pins the bytes of every subspace's keys and values, written out by hand from the tuples the
 * Javadoc trees document ({@link KeySpace}, {@link DatabaseSubspace} and the subspace classes) and
 * the tuple layer's type codes: {@code 00} null, {@code 01 … 00} bytes, {@code 02 … 00} UTF-8 text
 * (a {@code 00} inside either is {@code 00 ff}), {@code 05 … 00} nested tuple, {@code 14} zero,
 * {@code 15 NN} / {@code 16 NN NN} positive integers, {@code 26}/{@code 27} false/true,
 * {@code 33} + 12 bytes a versionstamp. A change to any layout fails here, on purpose: stored
 * data would no longer read back.
 *
 * <p>Patterns are hex bytes plus {@code <vs>} (12 bytes: a versionstamp, captured) and
 * {@code <hex32>} (32 lowercase hex characters: the uuid, captured).
 */
class KeyLayoutBytesTest {
    /** 2-00112233…ff: a canonical hash whose raw bytes hold a 00, escaped 00 ff in the tuple. */
    static final String H2 = "00112233445566778899aabbccddeeff";
    static final String H2_TUPLE = "01 00 ff 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff 00";
    static final String H1 = "0123456789abcdef0123456789abcdef";
    static final String H1_TUPLE = "01 01 23 45 67 89 ab cd ef 01 23 45 67 89 ab cd ef 00";
    static final String H3 = "00000000000000000000000000000001";
    static final String H3_TUPLE = "01 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 00 ff 01 00";

    /** (1, DbId=1): the first database gets id 1. */
    static final String DB = "15 01 15 01";

    StoreFixture f;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        f.store.txIds().close(); // stop the background cleaner, so the txids stay until cleared here
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void everyKeyAndValueOfADatabase() throws Exception {
        f.dirs.create("layout");
        // doc "a": a deleted branch 2-H3 and the live winner 2-H2, both children of 1-H1
        EditBranch gone = EditBranch.fromRevisions(2, List.of(H3, H1), true);
        EditBranch live = EditBranch.fromRevisions(2, List.of(H2, H1), false);
        assertTrue(f.store.open("layout").update(List.of(DocUpdate.replicated("a", gone, Json.NODES.objectNode())), false).getFirst().ok());
        assertTrue(f.store.open("layout").update(List.of(DocUpdate.replicated("a", live, (ObjectNode) Json.MAPPER.readTree("{\"k\":\"v\"}"))), false).getFirst().ok());
        f.store.open("layout").putLocal("_local/x", null, false, (ObjectNode) Json.MAPPER.readTree("{\"n\":1}"));
        f.store.flushDbUpdates(); // the writes' updated event, which the server records within half a second anyway

        // ---- txids: (0, "txids", TxId) = (Result, WallClockMillis), one per write
        List<KeyValue> txids = scan("14 02 74 78 69 64 73 00", "14 02 74 78 69 64 73 01");
        assertEquals(3, txids.size(), "one txid per guarded write: two document writes, one _local");
        for (KeyValue kv : txids) {
            byte[] k = kv.key();
            // 14 02 "txids" 00 01 <16 random bytes, 00 escaped> 00
            assertArrayEquals(hex("14 02 74 78 69 64 73 00 01"), Arrays.copyOf(k, 9));
            assertEquals(0, k[k.length - 1]);
            assertEquals(16, unescape(Arrays.copyOfRange(k, 9, k.length - 1)).length);
            byte[] v = kv.value();
            assertEquals(0x01, v[0], "Result is a byte string");
            int end = endOfBytes(v, 1);
            // WallClockMillis: a positive integer of 6 bytes (code 0x1a) for today's dates
            assertEquals(0x1a, v[end + 1]);
            assertEquals(end + 2 + 6, v.length);
        }
        assertEquals(3, f.store.txIds().clearAcknowledged());

        // ---- sizes, by hand: the winner's body is its RevisionMetadata KV and one KV for "k"
        String docsPrefix = DB + " 15 01 02 61 00 27 15 02 " + H2_TUPLE;        // (1 DOCS, "a", true, 2, H2)
        String docsK = docsPrefix + " 02 6b 00";                                  // + ("k")
        int active = hex(docsPrefix).length + 1 + hex(docsK).length + 3;          // values: 14, 02 76 00
        assertEquals(69, active);
        int external = "{\"k\":\"v\"}".length();

        List<String[]> expected = List.of(
                // (0, "dbid") = last DbId
                kv("14 02 64 62 69 64 00", "15 01"),
                // (0, "dbs", "layout") = (DbId, MetaStamp)
                kv("14 02 64 62 73 00 02 6c 61 79 6f 75 74 00", "15 01 33 <vs>"),
                // _db_updates: (0, "dbupdates", 0 FEED, Versionstamp) = ("layout", Type): one row per type, "created" then "updated"
                kv("14 02 64 62 75 70 64 61 74 65 73 00 14 33 <vs>", "02 6c 61 79 6f 75 74 00 02 63 72 65 61 74 65 64 00"),
                kv("14 02 64 62 75 70 64 61 74 65 73 00 14 33 <vs>", "02 6c 61 79 6f 75 74 00 02 75 70 64 61 74 65 64 00"),
                //   (0, "dbupdates", 1 LAST_ROW, "layout", Type) = (Versionstamp): where each row is
                kv("14 02 64 62 75 70 64 61 74 65 73 00 15 01 02 6c 61 79 6f 75 74 00 02 63 72 65 61 74 65 64 00", "33 <vs>"),
                kv("14 02 64 62 75 70 64 61 74 65 73 00 15 01 02 6c 61 79 6f 75 74 00 02 75 70 64 61 74 65 64 00", "33 <vs>"),
                //   (0, "dbupdates", 2 BUMP) = int64 LE: one per event recorded (a background flush may add one)
                kv("14 02 64 62 75 70 64 61 74 65 73 00 15 02", "<n8>"),
                // META: (1, 1, 0, Field) = Value
                kv(DB + " 14 02 69 6e 63 61 72 6e 61 74 69 6f 6e 00", "14"),                 // "incarnation" = 0
                kv(DB + " 14 02 72 65 76 73 5f 6c 69 6d 69 74 00", "16 03 e8"),              // "revs_limit" = 1000
                kv(DB + " 14 02 73 65 63 75 72 69 74 79 00", "02 7b 7d 00"),                 // "security" = "{}"
                kv(DB + " 14 02 75 75 69 64 00", "02 <hex32> 00"),                           // "uuid"
                // DOCS: RevisionMetadata = (RevFormat 0), then ("k") = ("v")
                kv(docsPrefix, "14"),
                kv(docsK, "02 76 00"),
                // REVISIONS: (1, 1, 2, "a", NotDeleted, 2, RevHash); deleted sorts first
                //   other  = (0, null, null, null, (H1), ExternalSize 0, ActiveSize 0): a bare deletion stores no body
                kv(DB + " 15 02 02 61 00 26 15 02 " + H3_TUPLE, "14 00 00 00 05 " + H1_TUPLE + " 00 14 14"),
                //   winner = (0, Incarnation 0, Versionstamp, BranchCount 2, (H1), 9, 69)
                kv(DB + " 15 02 02 61 00 27 15 02 " + H2_TUPLE, "14 14 33 <vs> 15 02 05 " + H1_TUPLE + " 00 15 09 15 45"),
                // BY_ID: (1, 1, 3, "a") = (ValueFormat 0, 2, H2)
                kv(DB + " 15 03 02 61 00", "14 15 02 " + H2_TUPLE),
                // CHANGES: (1, 1, 4, Incarnation 0, Versionstamp) = (SeqFormat 0, "a", 2, H2, BranchCount 2, NotDeleted true)
                kv(DB + " 15 04 14 33 <vs>", "14 02 61 00 15 02 " + H2_TUPLE + " 15 02 27"),
                // STATS: (1, 1, 5, Name) = int64 little-endian, changed by atomic ADD only
                kv(DB + " 15 05 02 64 6f 63 5f 63 6f 75 6e 74 00", "01 00 00 00 00 00 00 00"),             // doc_count 1
                kv(DB + " 15 05 02 64 6f 63 5f 64 65 6c 5f 63 6f 75 6e 74 00", "00 00 00 00 00 00 00 00"), // doc_del_count +1 -1
                kv(DB + " 15 05 02 73 69 7a 65 5f 61 63 74 69 76 65 00", String.format("%02x 00 00 00 00 00 00 00", active)),
                kv(DB + " 15 05 02 73 69 7a 65 5f 65 78 74 65 72 6e 61 6c 00", String.format("%02x 00 00 00 00 00 00 00", external)),
                kv(DB + " 15 05 02 77 72 69 74 65 73 00", "02 00 00 00 00 00 00 00"),                     // writes: two document writes above
                // LOCAL: (1, 1, 6, "_local/x") = (Format 0, N 1), then ("n") = (1)
                kv(DB + " 15 06 02 5f 6c 6f 63 61 6c 2f 78 00", "14 15 01"),
                kv(DB + " 15 06 02 5f 6c 6f 63 61 6c 2f 78 00 02 6e 00", "15 01"));

        List<KeyValue> all = scan("", "ff");
        List<byte[]> stamps = new ArrayList<>();
        List<byte[]> uuids = new ArrayList<>();
        for (int i = 0; i < Math.max(all.size(), expected.size()); i++) {
            if (i >= all.size()) fail("missing KV " + expected.get(i)[0]);
            if (i >= expected.size()) fail("unexpected KV " + Keys.printable(all.get(i).key()));
            String ctx = "KV " + i + ": " + Keys.printable(all.get(i).key());
            match(expected.get(i)[0], all.get(i).key(), stamps, uuids, ctx + " key");
            match(expected.get(i)[1], all.get(i).value(), stamps, uuids, ctx + " value");
        }
        // stamps: directory entry, the two _db_updates rows and their pointers, the winner's Sequence and its changes key
        assertEquals(7, stamps.size());
        assertArrayEquals(stamps.get(1), stamps.get(3), "the first pointer names the database's created row");
        assertArrayEquals(stamps.get(2), stamps.get(4), "the second names its updated row");
        assertArrayEquals(stamps.get(5), stamps.get(6), "the winner's Sequence is its changes key");
        assertArrayEquals(hex("00 00"), Arrays.copyOfRange(stamps.get(5), 10, 12), "user version 0: the batch's first document");
        assertEquals(f.dirs.open("layout").uuid(), new String(uuids.getFirst(), java.nio.charset.StandardCharsets.US_ASCII));
        f.checkInvariants("layout", 0);
    }

    /** Deleting a database removes every key under its prefix, and only those. */
    @Test
    void deletingADatabaseLeavesOnlyTheSystemKeys() {
        f.dirs.create("gone");
        f.dirs.create("kept");
        f.store.open("gone").update(List.of(DocUpdate.edit("a", null, false, Json.NODES.objectNode())), true);
        f.store.txIds().clearAcknowledged();
        f.dirs.delete("gone");
        for (KeyValue kv : scan("", "ff")) {
            byte[] k = kv.key();
            boolean system = k[0] == 0x14;
            boolean kept = Keys.startsWith(k, hex("15 01 15 02")); // "kept" got DbId 2
            assertTrue(system || kept, "left behind: " + Keys.printable(k));
            assertTrue(!Keys.startsWith(k, hex("14 02 64 62 73 00 02 67 6f 6e 65 00")), "directory entry of the deleted database");
        }
    }

    // ------------------------------------------------------------------ helpers

    private List<KeyValue> scan(String begin, String end) {
        return f.kv.run(tx -> tx.getRangeAsList(hex(begin), hex(end), 0, false));
    }

    private static String[] kv(String key, String value) {
        return new String[] {key, value};
    }

    static byte[] hex(String spaced) {
        return HexFormat.of().parseHex(spaced.replace(" ", ""));
    }

    private static void match(String pattern, byte[] actual, List<byte[]> stamps, List<byte[]> uuids, String ctx) {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        int at = 0;
        for (String token : pattern.trim().split("\\s+")) {
            switch (token) {
                case "<vs>" -> {
                    byte[] vs = Arrays.copyOfRange(actual, at, Math.min(actual.length, at + 12));
                    stamps.add(vs);
                    expected.writeBytes(vs);
                    at += 12;
                }
                case "<n8>" -> {
                    byte[] n = Arrays.copyOfRange(actual, at, Math.min(actual.length, at + 8));
                    assertTrue(java.nio.ByteBuffer.wrap(n).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong() > 0, ctx + ": a positive counter");
                    expected.writeBytes(n);
                    at += 8;
                }
                case "<hex32>" -> {
                    byte[] h = Arrays.copyOfRange(actual, at, Math.min(actual.length, at + 32));
                    for (byte c : h) assertTrue((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'), ctx + ": uuid is lowercase hex");
                    uuids.add(h);
                    expected.writeBytes(h);
                    at += 32;
                }
                default -> {
                    expected.write(Integer.parseInt(token, 16));
                    at++;
                }
            }
        }
        assertEquals(HexFormat.ofDelimiter(" ").formatHex(expected.toByteArray()), HexFormat.ofDelimiter(" ").formatHex(actual), ctx);
    }

    /** The end (index of the closing 00) of a tuple byte string whose payload starts at {@code from}. */
    private static int endOfBytes(byte[] v, int from) {
        for (int i = from; i < v.length; i++) {
            if (v[i] == 0) {
                if (i + 1 < v.length && v[i + 1] == (byte) 0xff) {
                    i++;
                    continue;
                }
                return i;
            }
        }
        throw new AssertionError("unterminated byte string");
    }

    private static byte[] unescape(byte[] escaped) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < escaped.length; i++) {
            out.write(escaped[i]);
            if (escaped[i] == 0) {
                assertEquals((byte) 0xff, escaped[i + 1], "00 is escaped as 00 ff");
                i++;
            }
        }
        return out.toByteArray();
    }
}
