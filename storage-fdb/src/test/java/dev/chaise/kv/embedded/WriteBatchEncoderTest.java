package dev.chaise.kv.embedded;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.junit.jupiter.api.Test;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;

/** The Java-side encoder writes exactly the bytes RocksDB's WriteBatch API builds. */
class WriteBatchEncoderTest {
    static {
        RocksDB.loadLibrary();
    }

    @Test
    void sameBytesAsRocksDbForRandomBatches(@TempDir Path dir) throws Exception {
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY));
        for (int i = 1; i <= 130; i++) descriptors.add(new ColumnFamilyDescriptor(("cf" + i).getBytes(StandardCharsets.US_ASCII)));
        List<ColumnFamilyHandle> cfs = new ArrayList<>();
        try (DBOptions options = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
             RocksDB db = RocksDB.open(options, dir.toString(), descriptors, cfs)) {
            check(cfs);
            for (ColumnFamilyHandle h : cfs) h.close();
        }
    }

    private static void check(List<ColumnFamilyHandle> cfs) throws Exception {
        Random r = new Random(1);
        for (int round = 0; round < 500; round++) {
            WriteBatchEncoder enc = new WriteBatchEncoder(r.nextInt(100));
            try (WriteBatch reference = new WriteBatch()) {
                int ops = r.nextInt(40);
                int recordBytes = 0;
                List<java.util.function.Consumer<WriteBatchEncoder>> replay = new ArrayList<>();
                for (int i = 0; i < ops; i++) {
                    // Lengths around the varint boundaries (127/128, 16383/16384) and empty values.
                    byte[] k = bytes(r, pick(r, 1, 127, 128, 300, 16_384));
                    byte[] v = bytes(r, pick(r, 0, 127, 128, 20_000, 100_000));
                    ColumnFamilyHandle h = cfs.get(r.nextInt(4) == 0 ? r.nextInt(cfs.size()) : 0); // ids past 127 take two varint bytes
                    int cf = h.getID();
                    switch (r.nextInt(3)) {
                        case 0 -> {
                            recordBytes += WriteBatchEncoder.recordBytes(cf, k.length, v.length);
                            enc.put(cf, k, v);
                            replay.add(e -> e.put(cf, k, v));
                            reference.put(h, k, v);
                        }
                        case 1 -> {
                            recordBytes += WriteBatchEncoder.recordBytes(cf, k.length, -1);
                            enc.delete(cf, k);
                            replay.add(e -> e.delete(cf, k));
                            reference.delete(h, k);
                        }
                        default -> {
                            recordBytes += WriteBatchEncoder.rangeBytes(cf, k.length, v.length);
                            enc.deleteRange(cf, k, v);
                            replay.add(e -> e.deleteRange(cf, k, v));
                            reference.deleteRange(h, k, v);
                        }
                    }
                }
                // The sizes the sequencer allocates by: a batch's bytes are its header's and its records'.
                assertEquals(reference.data().length, 12 + recordBytes, "round " + round);
                assertEquals(enc.size(), 12 + recordBytes, "round " + round);
                try (WriteBatch mine = enc.toWriteBatch()) {
                    assertEquals(reference.count(), mine.count());
                    assertArrayEquals(reference.data(), mine.data(), "round " + round);
                }
                // Sized by those bytes, an encoder never grows: its array goes to RocksDB as it is, uncopied.
                WriteBatchEncoder exact = new WriteBatchEncoder(recordBytes);
                for (var op : replay) op.accept(exact);
                assertEquals(exact.capacity(), exact.size(), "round " + round + ": grew past its exact size");
                try (WriteBatch mine = exact.toWriteBatch()) {
                    assertArrayEquals(reference.data(), mine.data(), "round " + round);
                }
            }
        }
    }

    private static int pick(Random r, int... sizes) {
        int base = sizes[r.nextInt(sizes.length)];
        return Math.max(0, base + r.nextInt(3) - 1);
    }

    private static byte[] bytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }
}
