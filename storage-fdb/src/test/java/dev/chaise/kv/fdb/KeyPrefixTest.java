package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.Keys;
import dev.chaise.kv.Versionstamps;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The arithmetic that places the seam's key space under Chaise's directory. */
class KeyPrefixTest {
    private static final byte[] P = {0x15, 0x12}; // a Directory layer prefix looks like this: a short tuple-encoded integer
    private final KeyPrefix prefix = new KeyPrefix(P);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void keysGoUnderThePrefixAndComeBack() {
        assertArrayEquals(Keys.concat(P, b("doc")), prefix.add(b("doc")));
        assertArrayEquals(b("doc"), prefix.strip(prefix.add(b("doc"))));
        assertArrayEquals(P, prefix.add(Keys.EMPTY), "the seam's start is the directory's");
        assertArrayEquals(Keys.concat(P, Keys.SYSTEM_PREFIX), prefix.add(Keys.SYSTEM_PREFIX), "the seam's end is the prefix plus \\xff");
        KeySelector s = prefix.add(KeySelector.firstGreaterThan(b("k")));
        assertArrayEquals(Keys.concat(P, b("k")), s.key());
        assertEquals(KeySelector.firstGreaterThan(b("k")).orEqual(), s.orEqual());
        assertEquals(KeySelector.firstGreaterThan(b("k")).offset(), s.offset());
    }

    @Test
    void aResolvedSelectorOutsideTheDirectoryIsTheSeamsEdge() {
        assertArrayEquals(Keys.EMPTY, prefix.resolved(b("\u0001another application")), "before the directory: before the first key");
        assertArrayEquals(Keys.EMPTY, prefix.resolved(Keys.EMPTY));
        assertArrayEquals(b("k"), prefix.resolved(Keys.concat(P, b("k"))));
        assertArrayEquals(Keys.SYSTEM_PREFIX, prefix.resolved(Keys.concat(P, Keys.SYSTEM_PREFIX)), "the seam's end");
        assertArrayEquals(Keys.SYSTEM_PREFIX, prefix.resolved(new byte[] {0x15, 0x13}), "the next directory");
        assertArrayEquals(Keys.SYSTEM_PREFIX, prefix.resolved(Keys.SYSTEM_PREFIX), "past the database's last key");
    }

    @Test
    void aVersionstampedKeysOffsetMovesWithThePrefix() {
        byte[] operand = Versionstamps.packWithVersionstamp(b("changes/"), Tuple.from(Versionstamp.incomplete(7)));
        byte[] moved = prefix.addToVersionstampedKey(operand);
        byte[] stamp = Versionstamps.txVersionstamp(123_456_789L, 3);
        // Filled as the cluster fills it: the same key as the seam's, under the prefix.
        assertArrayEquals(Keys.concat(P, Versionstamps.fill(operand, stamp)), Versionstamps.fill(moved, stamp));
        assertArrayEquals(Keys.concat(P, b("changes/")), java.util.Arrays.copyOf(moved, P.length + 8));
    }

    @Test
    void noPrefixIsTheIdentity() {
        byte[] k = b("k");
        assertSame(k, KeyPrefix.NONE.add(k));
        assertSame(k, KeyPrefix.NONE.strip(k));
        byte[] operand = Versionstamps.packWithVersionstamp(b("v"), Tuple.from(Versionstamp.incomplete(0)));
        assertSame(operand, KeyPrefix.NONE.addToVersionstampedKey(operand));
        assertArrayEquals(Keys.SYSTEM_PREFIX, KeyPrefix.NONE.resolved(b("\u00ff\u00ffstatus")));
        assertArrayEquals(Keys.EMPTY, KeyPrefix.NONE.resolved(Keys.EMPTY));
    }

    @Test
    void directoryPathsAsConfigured() {
        assertEquals(List.of("chaise"), FdbKvStore.Options.directoryPath("chaise"));
        assertEquals(List.of("apps", "chaise"), FdbKvStore.Options.directoryPath(" apps / chaise/"));
        assertEquals(List.of(), FdbKvStore.Options.directoryPath(""), "blank: the cluster's whole key space");
        FdbKvStore.Options o = FdbKvStore.Options.defaults(null);
        assertEquals(List.of("chaise"), o.directory());
        assertEquals(100, o.retryLimit());
        assertEquals(java.time.Duration.ofSeconds(10), o.transactionTimeout());
    }
}
