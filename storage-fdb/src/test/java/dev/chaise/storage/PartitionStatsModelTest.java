package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A partitioned database under random writes, deletes, replicated conflicts and purges across
 * partitions: after every step each partition's counters ({@link PartitionStats}) equal what a
 * scan of the whole database counts ({@link Invariants} decodes the raw KVs), its info says the
 * same, and its {@code _all_docs} (whole, a random range, both directions) is exactly the
 * database's rows of that partition.
 */
class PartitionStatsModelTest {
    private static final List<String> PARTITIONS = List.of("a", "b", "bb", "c0");
    StoreFixture f;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void countersAndScansFollowRandomHistories() {
        for (long seed = 1; seed <= 3; seed++) run(seed, 150);
    }

    private void run(long seed, int steps) {
        Random rnd = new Random(seed);
        String name = "parts-" + seed;
        Database db = f.store.create(name, new DbProps(true, false));
        assertTrue(db.partitioned());
        for (int step = 0; step < steps; step++) {
            int n = 1 + rnd.nextInt(4);
            List<DocUpdate> edits = new ArrayList<>();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String id = id(rnd);
                if (ids.contains(id)) continue;
                ids.add(id);
                DocInfo w = db.winner(id);
                int kind = rnd.nextInt(10);
                if (kind < 2 && w != null) {
                    // a replicated branch beside the winner: a conflict, sizes of a second leaf
                    EditBranch b = EditBranch.fromRevisions(w.rev().pos(), List.of(hex(rnd)), rnd.nextBoolean());
                    db.update(List.of(DocUpdate.replicated(id, b, body(rnd))), false);
                } else if (kind < 3 && w != null) {
                    List<RevId> leaves = new ArrayList<>();
                    for (EditBranch e : db.branches(id)) leaves.add(e.leaf());
                    db.purge(List.of(new PurgeRequest(id, List.of(leaves.get(rnd.nextInt(leaves.size()))))));
                } else if (w != null && !w.deleted() && kind < 6) {
                    edits.add(DocUpdate.edit(id, w.rev(), true, Json.NODES.objectNode()));
                } else {
                    edits.add(DocUpdate.edit(id, w == null ? null : w.rev(), false, body(rnd)));
                }
            }
            if (!edits.isEmpty()) db.update(edits, true);
            check(db, name, rnd, "seed " + seed + " step " + step);
        }
    }

    private void check(Database db, String name, Random rnd, String ctx) {
        f.checkInvariants(name, 0); // the counters of every partition against the raw scan
        List<String> every = ids(db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD, null, (r, d) -> d.id()));
        for (String p : PARTITIONS) {
            List<String> expected = every.stream().filter(id -> id.startsWith(p + ":")).toList();
            assertEquals(expected, ids(db.allDocs(p, Database.IdRange.ALL, ScanProperties.FORWARD, null, (r, d) -> d.id())), ctx + " " + p);
            assertEquals(expected.reversed(), ids(db.allDocs(p, Database.IdRange.ALL, ScanProperties.of(true, 0), null, (r, d) -> d.id())), ctx);
            assertEquals(expected.size(), db.partitionInfo(p).docCount(), ctx + " doc_count of " + p);
            // a range that may begin or end outside the partition is clamped to it
            String lo = id(rnd);
            String hi = id(rnd);
            if (lo.compareTo(hi) > 0) {
                String t = lo;
                lo = hi;
                hi = t;
            }
            String from = lo;
            String to = hi;
            List<String> inRange = expected.stream().filter(id -> id.compareTo(from) >= 0 && id.compareTo(to) <= 0).toList();
            assertEquals(inRange, ids(db.allDocs(p, new Database.IdRange(from, to, true), ScanProperties.FORWARD, null, (r, d) -> d.id())),
                    ctx + " range " + from + ".." + to);
            assertEquals(inRange.reversed(), ids(db.allDocs(p, new Database.IdRange(to, from, true), ScanProperties.of(true, 0), null, (r, d) -> d.id())),
                    ctx + " descending range");
        }
    }

    private static String id(Random rnd) {
        int k = rnd.nextInt(20);
        if (k == 0) return "_design/d" + rnd.nextInt(2); // global: counted by the database, in no partition
        return PARTITIONS.get(rnd.nextInt(PARTITIONS.size())) + ":" + (char) ('a' + rnd.nextInt(5)) + (rnd.nextInt(4) == 0 ? ":x" : "");
    }

    private static ObjectNode body(Random rnd) {
        ObjectNode o = Json.NODES.objectNode();
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) o.put("f" + i, "v".repeat(rnd.nextInt(40)));
        return o;
    }

    private static String hex(Random rnd) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 32; i++) b.append(Character.forDigit(rnd.nextInt(16), 16));
        return b.toString();
    }

    private static List<String> ids(Cursor<String> c) {
        List<String> out = new ArrayList<>();
        c.forEachRemaining(out::add);
        return out;
    }
}
