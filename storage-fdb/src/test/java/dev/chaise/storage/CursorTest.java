package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one cursor type: continuations, stop reasons, and the check that the database is still the one opened. */
class CursorTest {
    KvStore kv;
    Storage store;
    Database db;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        store = new Storage(kv, "{}");
        db = store.create("db");
        List<DocUpdate> docs = new ArrayList<>();
        for (int i = 0; i < 50; i++) docs.add(DocUpdate.edit(String.format("d%02d", i), null, false, Json.NODES.objectNode().put("i", i)));
        db.update(docs, true).forEach(r -> assertTrue(r.ok()));
    }

    @AfterEach
    void close() {
        store.close();
        kv.close();
    }

    private static List<String> drain(Cursor<String> c) {
        List<String> out = new ArrayList<>();
        c.forEachRemaining(out::add);
        return out;
    }

    private Cursor<String> ids(ScanProperties p, byte[] continuation) {
        return db.allDocs(Database.IdRange.ALL, p, continuation, (r, d) -> d.id());
    }

    @Test
    void aContinuationResumesRightAfterTheLastValueInANewCursor() {
        for (boolean reverse : new boolean[] {false, true}) {
            List<String> all = drain(ids(ScanProperties.of(reverse, 0), null));
            assertEquals(50, all.size());
            List<String> pages = new ArrayList<>();
            byte[] cont = null;
            for (int page = 0; page < 10; page++) {
                Cursor<String> c = ids(ScanProperties.of(reverse, 7).rowsPerTransaction(3), cont);
                List<String> got = drain(c);
                pages.addAll(got);
                if (c.noNextReason() == NoNextReason.SOURCE_EXHAUSTED) break;
                assertEquals(NoNextReason.RETURN_LIMIT_REACHED, c.noNextReason());
                assertEquals(7, got.size());
                cont = c.continuation();
            }
            assertEquals(all, pages, "pages of 7, read 3 rows per transaction, equal one scan (reverse " + reverse + ")");
        }
    }

    @Test
    void aCursorHeldToOneTransactionNamesTheLimitItReached() {
        Cursor<String> scan = ids(ScanProperties.FORWARD.rowsPerTransaction(10).oneTransaction(), null);
        assertEquals(10, drain(scan).size());
        assertEquals(NoNextReason.SCAN_LIMIT_REACHED, scan.noNextReason());
        Cursor<String> next = ids(ScanProperties.FORWARD.rowsPerTransaction(10).oneTransaction(), scan.continuation());
        assertEquals("d10", next.next(), "the next transaction starts after the last row read");

        // Bytes: the mapper's reads count (each body read adds its KVs).
        Cursor<String> bytes = db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.bytesPerTransaction(1).oneTransaction(), null,
                (r, d) -> r.get(d.id(), null, false).id());
        assertEquals(List.of("d00"), drain(bytes));
        assertEquals(NoNextReason.BYTE_LIMIT_REACHED, bytes.noNextReason());

        Cursor<String> time = db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.millisPerTransaction(0).oneTransaction(), null, (r, d) -> {
            sleep(2);
            return d.id();
        });
        assertEquals(List.of("d00"), drain(time));
        assertEquals(NoNextReason.TIME_LIMIT_REACHED, time.noNextReason());

        Cursor<String> spanning = db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.millisPerTransaction(0).rowsPerTransaction(4), null, (r, d) -> {
            sleep(2);
            return d.id();
        });
        assertEquals(50, drain(spanning).size(), "a spanning cursor goes on in a new transaction");
        assertEquals(NoNextReason.SOURCE_EXHAUSTED, spanning.noNextReason());
    }

    @Test
    void skippedRowsCountForTheContinuationOnlyOnceTheCursorMovedPastThem() {
        // Keep every tenth id: the rows between are skipped.
        Cursor<String> c = db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.rowsPerTransaction(7), null,
                (r, d) -> d.id().endsWith("0") ? d.id() : null);
        assertEquals(List.of("d00", "d10", "d20", "d30", "d40"), drain(c));
        assertEquals(NoNextReason.SOURCE_EXHAUSTED, c.noNextReason());
        Cursor<String> after = ids(ScanProperties.FORWARD, c.continuation());
        assertFalse(after.hasNext(), "exhausted: the continuation is past the skipped rows after d40");

        Cursor<String> limited = db.allDocs(Database.IdRange.ALL, ScanProperties.of(false, 2), null, (r, d) -> d.id().endsWith("0") ? d.id() : null);
        assertEquals(List.of("d00", "d10"), drain(limited));
        assertEquals("d11", ids(ScanProperties.FORWARD, limited.continuation()).next(), "limited: resumes after the last value");
    }

    @Test
    void aChangesContinuationIsTheLastSequenceRead() {
        Cursor<Change> c = db.changes(null, ScanProperties.of(false, 5), (r, ch) -> ch);
        List<Change> five = new ArrayList<>();
        c.forEachRemaining(five::add);
        assertEquals(five.getLast().seq(), Sequence.fromContinuation(c.continuation()));
        List<String> rest = new ArrayList<>();
        db.changes(Sequence.fromContinuation(c.continuation()), ScanProperties.FORWARD, (r, ch) -> ch.id()).forEachRemaining(rest::add);
        assertEquals(45, rest.size());
        assertEquals("d05", rest.getFirst());
    }

    @Test
    void aContinuationOutsideTheRangeIsABadRequest() {
        Cursor<String> late = db.allDocs(new Database.IdRange("d30", null, true), ScanProperties.of(false, 1), null, (r, d) -> d.id());
        assertEquals("d30", late.next());
        Database.IdRange tens = new Database.IdRange("d10", "d20", false);
        StorageException e = assertThrows(StorageException.class,
                () -> db.allDocs(tens, ScanProperties.FORWARD, late.continuation(), (r, d) -> d.id()));
        assertEquals(StorageException.Kind.BAD_REQUEST, e.kind(), "a client's continuation cannot read outside the range it is given");
        Cursor<String> early = db.allDocs(new Database.IdRange("d12", null, true), ScanProperties.of(false, 1), null, (r, d) -> d.id());
        early.next();
        List<String> rest = new ArrayList<>();
        db.allDocs(tens, ScanProperties.FORWARD, early.continuation(), (r, d) -> d.id()).forEachRemaining(rest::add);
        assertEquals(List.of("d13", "d14", "d15", "d16", "d17", "d18", "d19"), rest);
    }

    @Test
    void aScanDoesNotReadOnIntoADatabaseRecreatedUnderItsName() {
        Cursor<String> c = ids(ScanProperties.FORWARD.rowsPerTransaction(5), null);
        for (int i = 0; i < 5; i++) c.next();
        store.delete("db");
        Database again = store.create("db");
        again.update(List.of(DocUpdate.edit("zz", null, false, Json.NODES.objectNode())), true);
        StorageException e = assertThrows(StorageException.class, c::hasNext);
        assertEquals(StorageException.Kind.NOT_FOUND, e.kind());
        assertThrows(StorageException.class, () -> db.get("d00", null, false), "the old object is the old database");
        assertEquals("zz", store.open("db").get("zz", null, false).id());
    }

    @Test
    void retriedTransactionsDoNotDuplicateOrLoseRows() {
        try (KvStore faulty = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(new FaultInjection(0.3, 0.3, 0, 0, 11)));
             Storage s = new Storage(faulty, "{}")) {
            Database d = null;
            for (int attempt = 0; d == null; attempt++) {
                try {
                    d = s.create("f");
                } catch (RuntimeException e) {
                    if (attempt > 50) throw e;
                }
            }
            List<DocUpdate> docs = new ArrayList<>();
            for (int i = 0; i < 200; i++) docs.add(DocUpdate.edit(String.format("x%03d", i), null, false, Json.NODES.objectNode()));
            for (UpdateResult r : d.update(docs, true)) assertTrue(r.ok());
            List<String> got = new ArrayList<>();
            d.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.rowsPerTransaction(9), null, (r, x) -> x.id()).forEachRemaining(got::add);
            assertEquals(docs.stream().map(DocUpdate::id).toList(), got);
        }
    }

    /** A mapper that reads ahead: the same values and continuations as one that does not, each row prefetched before it is mapped, never past the limit. */
    @Test
    void aPrefetchingMapperSeesItsRowsFirstAndGetsWhatAPlainOneGets() {
        byte[][] all = ByIdSubspace.range(db.handle());
        Cursor.Range range = new Cursor.Range(db.handle().space().pack(KeySpace.Db.BY_ID), all[0], all[1]);
        for (boolean reverse : new boolean[] {false, true}) {
            for (int limit : new int[] {0, 1, 4, 7}) {
                ScanProperties p = ScanProperties.of(reverse, limit).rowsPerTransaction(6);
                Cursor.RowMapper<String> plain = (r, kv) -> keep(ByIdSubspace.decode(r.handle(), kv).id());
                List<List<String>> batches = new ArrayList<>();
                List<String> lastBatch = new ArrayList<>();
                Cursor.RowMapper<String> ahead = new Cursor.RowMapper<>() {
                    @Override
                    public int prefetchSize() {
                        return 5;
                    }

                    @Override
                    public void prefetch(DbReader r, List<dev.chaise.kv.KeyValue> rows) {
                        lastBatch.clear();
                        for (var kv : rows) lastBatch.add(ByIdSubspace.decode(r.handle(), kv).id());
                        batches.add(List.copyOf(lastBatch));
                    }

                    @Override
                    public String map(DbReader r, dev.chaise.kv.KeyValue kv) {
                        String id = ByIdSubspace.decode(r.handle(), kv).id();
                        assertTrue(lastBatch.contains(id), id + " was prefetched before it was mapped");
                        return keep(id);
                    }
                };
                byte[] c1 = null;
                byte[] c2 = null;
                for (int page = 0; page < 30; page++) {
                    Cursor<String> a = db.subspaces().scan(range, p, c1, plain);
                    Cursor<String> b = db.subspaces().scan(range, p, c2, ahead);
                    assertEquals(drain(a), drain(b), "reverse " + reverse + ", limit " + limit + ", page " + page);
                    assertEquals(a.noNextReason(), b.noNextReason());
                    c1 = a.continuation();
                    c2 = b.continuation();
                    assertArrayEquals(c1, c2);
                    if (a.noNextReason() == NoNextReason.SOURCE_EXHAUSTED) break;
                }
                for (List<String> batch : batches) {
                    assertTrue(batch.size() <= 5 && !batch.isEmpty(), "a batch of " + batch.size());
                    if (limit > 0) assertTrue(batch.size() <= limit, "no batch reads past what the limit can use");
                }
            }
        }
    }

    /** Every third document: the mapper skips rows, so prefetched rows are not all returned. */
    private static String keep(String id) {
        return Integer.parseInt(id.substring(1)) % 3 == 0 ? id : null;
    }

    @Test
    void winnersReadTogetherEqualDocumentsReadOneByOne() throws Exception {
        db.update(List.of(DocUpdate.edit("d07", db.get("d07", null, false).rev(), true, Json.NODES.objectNode())), true);
        db.update(List.of(DocUpdate.edit("n1", null, false, (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree("{\"a\":{\"b\":[1,2]},\"c\":\"x\",\"d\":null}"))), true);
        List<String> ids = List.of("d03", "nope", "d07", "n1", "d49", "d03");
        for (java.util.Collection<String> members : java.util.Arrays.<java.util.Collection<String>>asList(null, List.of("a", "d", "zz"), List.of())) {
            for (boolean branches : new boolean[] {false, true}) {
                List<StoredDoc> together = db.read(r -> r.winners(ids, members, branches));
                assertEquals(ids.size(), together.size());
                for (int i = 0; i < ids.size(); i++) {
                    String id = ids.get(i);
                    StoredDoc one;
                    try {
                        one = db.read(r -> members == null ? r.get(id, null, branches) : r.getMembers(id, members, branches));
                    } catch (StorageException e) {
                        assertEquals(StorageException.Kind.NOT_FOUND, e.kind());
                        one = null;
                    }
                    assertEquals(one, together.get(i), id + " with members " + members);
                }
            }
        }
    }

    /**
     * A {@link Database.Prefetching} changes scan: each row handed over before it is mapped, in runs
     * of the size asked before each; the documents {@link DbReader#changed} reads together are the
     * ones {@link DbReader#get} reads one by one (a conflicted one with its branches, a deleted one none).
     */
    @Test
    void aPrefetchingChangesScanReadsTheSameDocumentsTogether() {
        db.update(List.of(DocUpdate.replicated("d03", new EditBranch(new RevId(1, "55555555555555555555555555555555"), false, List.of()),
                Json.NODES.objectNode().put("other", true))), false);
        db.update(List.of(DocUpdate.edit("d07", db.get("d07", null, false).rev(), true, Json.NODES.objectNode())), true);
        List<Integer> sizes = new ArrayList<>();
        List<StoredDoc> together = new ArrayList<>();
        Database.Prefetching<Change, Change> ahead = new Database.Prefetching<>() {
            final List<Change> run = new ArrayList<>();

            @Override
            public int prefetchSize() {
                return 1 + sizes.size() % 4; // 1, 2, 3, 4, 1, ...
            }

            @Override
            public void prefetch(DbReader r, List<Change> rows) {
                sizes.add(rows.size());
                run.clear();
                run.addAll(rows);
                together.addAll(r.changed(rows));
            }

            @Override
            public Change map(DbReader r, Change c) {
                assertTrue(run.contains(c), c.id() + " was handed over before it was mapped");
                return c;
            }
        };
        List<Change> changes = new ArrayList<>();
        db.changes(null, ScanProperties.FORWARD.rowsPerTransaction(7), ahead).forEachRemaining(changes::add);
        assertEquals(50, changes.size());
        assertEquals(changes.size(), together.size());
        for (int i = 0; i < sizes.size(); i++) assertTrue(sizes.get(i) <= 1 + i % 4, "run " + i + " of " + sizes.get(i));
        for (int i = 0; i < changes.size(); i++) {
            Change c = changes.get(i);
            StoredDoc one = c.deleted() ? null : db.read(r -> r.get(c.id(), c.rev(), c.branchCount() > 1));
            assertEquals(one, together.get(i), c.id());
        }
        assertNull(together.get(changes.indexOf(changes.stream().filter(c -> c.id().equals("d07")).findFirst().orElseThrow())));
        assertEquals(2, together.stream().filter(d -> d != null && d.id().equals("d03")).findFirst().orElseThrow().branches().size());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
