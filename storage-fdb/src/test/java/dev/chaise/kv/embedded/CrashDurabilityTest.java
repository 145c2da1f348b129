package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.RangeIterator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Durability of the embedded engine on disk: a child JVM ({@link CrashLoadMain}) commits from
 * several threads and acknowledges each commit on stdout; it is killed with SIGKILL mid-load. After
 * reopening, every acknowledged transaction must be fully present, and every transaction present
 * must be complete (all its keys or none), and a counter every transaction adds to must count the
 * transactions present (none survived without one before it). Three rounds on the same directory, so recovery of an
 * already-recovered store is exercised too; the child flushes memtables as it goes, so the kills
 * also land while RocksDB writes over a recycled WAL.
 */
class CrashDurabilityTest {
    private static final int ROUNDS = 3;
    private static final int THREADS = 4;
    /** Acks to wait for before the kill. */
    private static final int TARGET_ACKS = 3_000;
    /** If the machine is slow, kill at this point anyway; the assertions hold for any number of acks. */
    private static final long ROUND_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(7);

    @Test
    void everyAcknowledgedCommitSurvivesSigkill(@TempDir Path tmp) throws Exception {
        Path db = tmp.resolve("db");
        Set<Long> acked = new HashSet<>();
        for (int round = 0; round < ROUNDS; round++) {
            long first = (round + 1) * 1_000_000_000L; // numbers never reused, even for unacknowledged commits
            Path log = tmp.resolve("child-" + round + ".log");
            List<Long> roundAcks = runAndKill(db, first, log);
            assertFalse(roundAcks.isEmpty(), () -> "the child acknowledged nothing; its stderr: " + readLog(log));
            acked.addAll(roundAcks);
            int present = verify(db, acked, round);
            System.out.printf("crash round %d: %d acks before SIGKILL; %d transactions present, all complete (%d acked in total)%n",
                    round, roundAcks.size(), present, acked.size());
        }
        assertTrue(reusedAWal(db), "the child's flushes had RocksDB write over an obsolete WAL (recycle_log_file_num) before a kill");
    }

    /** Whether RocksDB's info logs (LOG, and LOG.old.* of earlier opens) say a WAL was reused from the recycle list. */
    private static boolean reusedAWal(Path db) throws IOException {
        try (Stream<Path> files = Files.list(db)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith("LOG")).toList()) {
                if (Files.readString(f, StandardCharsets.ISO_8859_1).contains("from recycle list")) return true;
            }
        }
        return false;
    }

    private static List<Long> runAndKill(Path db, long first, Path log) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                CrashLoadMain.class.getName(), db.toString(), Long.toString(first), Integer.toString(THREADS));
        pb.redirectError(log.toFile());
        Process child = pb.start();
        List<Long> acks = Collections.synchronizedList(new ArrayList<>());
        Thread reader = Thread.ofPlatform().name("ack-reader").start(() -> readAcks(child.getInputStream(), acks));
        try {
            long deadline = System.nanoTime() + ROUND_BUDGET_NANOS;
            while (acks.size() < TARGET_ACKS && child.isAlive() && System.nanoTime() < deadline) Thread.sleep(5);
            assertTrue(child.isAlive(), () -> "the child died on its own: " + readLog(log));
        } finally {
            child.destroyForcibly(); // SIGKILL
            assertTrue(child.waitFor(20, TimeUnit.SECONDS), "the child did not die");
        }
        reader.join(TimeUnit.SECONDS.toMillis(20)); // reads what was already in the pipe, then EOF
        assertFalse(reader.isAlive());
        return new ArrayList<>(acks);
    }

    /** Parses complete {@code ACK <n>} lines; a line cut off by the kill is not an acknowledgement. */
    private static void readAcks(InputStream in, List<Long> acks) {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] != '\n') {
                        line.write(buf[i]);
                        continue;
                    }
                    String s = line.toString(US_ASCII);
                    line.reset();
                    if (s.startsWith("ACK ")) acks.add(Long.parseLong(s.substring(4)));
                }
            }
        } catch (IOException e) {
            // the pipe closes when the child dies
        }
    }

    /** Returns how many transactions are present. */
    private static int verify(Path db, Set<Long> acked, int round) {
        Map<Long, Integer> keysPerTx = new HashMap<>();
        long[] counted = {0};
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(db))) {
            store.run(tx -> {
                keysPerTx.clear();
                byte[] c = tx.get(CrashLoadMain.COUNT);
                counted[0] = c == null ? 0 : ByteBuffer.wrap(c).order(ByteOrder.LITTLE_ENDIAN).getLong();
                for (int i = 0; i < CrashLoadMain.KEYS_PER_TX; i++) {
                    try (RangeIterator it = tx.getRangeStartsWith(("c" + i + "/").getBytes(US_ASCII), 0, false)) {
                        while (it.hasNext()) {
                            KeyValue kv = it.next();
                            long n = Long.parseLong(new String(kv.key(), US_ASCII).substring(3));
                            assertArrayEquals(CrashLoadMain.value(n, i), kv.value(), "value of transaction " + n + " key " + i);
                            keysPerTx.merge(n, 1, Integer::sum);
                        }
                    }
                }
                return null;
            });
        }
        for (long n : acked) {
            assertEquals(CrashLoadMain.KEYS_PER_TX, keysPerTx.getOrDefault(n, 0),
                    "after round " + round + ", acknowledged transaction " + n + " is not fully present");
        }
        keysPerTx.forEach((n, count) -> assertEquals(CrashLoadMain.KEYS_PER_TX, count,
                "after round " + round + ", transaction " + n + " is torn"));
        assertTrue(keysPerTx.size() >= acked.size());
        // Each transaction's addition was written as the sum so far: a count that differs from what is
        // present means some transaction survived without one that came before it.
        assertEquals(keysPerTx.size(), counted[0], "after round " + round + ", the counter counts the transactions present");
        return keysPerTx.size();
    }

    private static String readLog(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log, US_ASCII) : "(no log)";
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }
}
