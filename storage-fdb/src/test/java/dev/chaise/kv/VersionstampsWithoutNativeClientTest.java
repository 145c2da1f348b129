package dev.chaise.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Versionstamped packing is on the embedded path, so it must work where libfdb_c does not exist
 * (here, for one). fdb-java's own size and pack helpers for incomplete versionstamps load it.
 */
class VersionstampsWithoutNativeClientTest {

    @Test
    void packsInFdbsApi520FormatWithoutTheClientLibrary() {
        byte[] prefix = "p".getBytes(StandardCharsets.UTF_8);
        byte[] got = Versionstamps.packWithVersionstamp(prefix, Tuple.from("doc", Versionstamp.incomplete(7), 5L));

        ByteArrayOutputStream want = new ByteArrayOutputStream();
        want.writeBytes(prefix);
        want.writeBytes(Tuple.from("doc").pack());
        int offset = want.size() + 1;
        want.write(0x33);
        for (int i = 0; i < 10; i++) want.write(0xff);
        want.writeBytes(new byte[] {0, 7});
        want.writeBytes(Tuple.from(5L).pack());
        want.writeBytes(new byte[] {(byte) offset, 0, 0, 0});
        assertArrayEquals(want.toByteArray(), got);
    }
}
