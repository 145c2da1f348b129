package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvException;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.RevisionsSubspace.Branch;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A bulk write's read of its new documents ({@link RevisionsSubspace#lastBranchOfEach}): one
 * snapshot read of the documents' span, answering as a reverse read of each document would, and
 * conflicting on each document's range and on nothing else of the span.
 */
class ReadAheadSpanTest {
    StoreFixture f;
    Database db;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        db = f.store.open(f.newDb("span", 0));
    }

    @AfterEach
    void close() {
        f.close();
    }

    private static ObjectNode body(int v) {
        ObjectNode o = Json.NODES.objectNode();
        o.put("v", v);
        return o;
    }

    private void create(String... ids) {
        List<DocUpdate> docs = new ArrayList<>();
        for (String id : ids) docs.add(DocUpdate.edit(id, null, false, body(1)));
        db.updateUnchecked(docs, true);
    }

    /** The span read's answer, and the one a reverse read of each document gives, in one transaction. */
    private void assertSameAsEachRead(List<String> ids) {
        Transaction tx = f.kv.createTransaction();
        try {
            DbHandle h = db.handle(tx);
            List<List<Branch>> span = RevisionsSubspace.lastBranchOfEach(tx, h, ids);
            List<List<Branch>> each = RevisionsSubspace.branchesOfEach(tx, h, ids, 1);
            assertEquals(each, span);
        } finally {
            tx.close();
        }
    }

    @Test
    void answersAsEachDocumentsOwnRead() {
        create("a", "m", "q");
        db.updateUnchecked(List.of(DocUpdate.edit("q", null, true, body(0))), true); // q: a deleted winner
        // Unsorted ids, a new one beside existing ones, and another document (m) inside the span.
        assertSameAsEachRead(List.of("z", "a", "k", "q"));
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 3 * RevisionsSubspace.SPAN_SLACK; i++) many.add(String.format("n%03d", i));
        create(many.toArray(String[]::new));
        // More rows of other documents in the span than it takes: each document read by itself.
        assertSameAsEachRead(List.of("z", "a", "k"));
    }

    @Test
    void conflictsOnEachDocumentsRangeOnly() {
        create("a", "m");
        Transaction tx = f.kv.createTransaction();
        DbHandle h = db.handle(tx);
        RevisionsSubspace.lastBranchOfEach(tx, h, List.of("k", "a", "z"));
        create("m2"); // inside the span, in no document's range
        tx.addWriteConflictRange(new byte[] {0x10}, new byte[] {0x11}); // a write transaction, so its reads are checked
        tx.commit();
        tx.close();

        Transaction tx2 = f.kv.createTransaction();
        RevisionsSubspace.lastBranchOfEach(tx2, db.handle(tx2), List.of("k", "a", "z"));
        create("k"); // a document the read found absent
        tx2.addWriteConflictRange(new byte[] {0x10}, new byte[] {0x11});
        KvException e = assertThrows(KvException.class, tx2::commit);
        assertEquals(KvException.NOT_COMMITTED, e.code());
        tx2.close();
    }
}
