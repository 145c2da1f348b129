package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.DocumentStore.DocInfo;
import dev.chaise.storage.DocumentStore.DocUpdate;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** _all_docs and _changes scans, including ones longer than one transaction. */
class ScansTest {
    KvStore kv;
    DocumentStore store;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        store = new DocumentStore(kv, new DatabaseDirectory(kv, "{}"), DocumentStore.DEFAULT_MAX_DOCUMENT_SIZE);
        store.databases().create("db");
    }

    @AfterEach
    void close() {
        store.close();
        kv.close();
    }

    void write(int n) {
        List<DocUpdate> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ObjectNode b = Json.NODES.objectNode().put("i", i);
            docs.add(DocUpdate.edit(String.format("d%05d", i), null, false, b));
        }
        store.update("db", docs, true).forEach(r -> assertTrue(r.ok()));
    }

    static <T> List<T> drain(RangeCursor<T> c) {
        List<T> out = new ArrayList<>();
        c.forEachRemaining(out::add);
        return out;
    }

    @Test
    void allDocsBoundsAndDirection() {
        write(10);
        List<String> ids = drain(store.allDocs("db", "d00002", "d00005", true, false, 0, DocumentStore::byIdRow)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00002", "d00003", "d00004", "d00005"), ids);
        ids = drain(store.allDocs("db", "d00002", "d00005", false, false, 0, DocumentStore::byIdRow)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00002", "d00003", "d00004"), ids);
        ids = drain(store.allDocs("db", "d00005", "d00002", true, true, 2, DocumentStore::byIdRow)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00005", "d00004"), ids);
        ids = drain(store.allDocs("db", "d00005", "d00002", false, true, 0, DocumentStore::byIdRow)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00005", "d00004", "d00003"), ids);
    }

    @Test
    void scansSpanTransactions() {
        int n = RangeCursor.ROWS_PER_TRANSACTION * 2 + 17;
        write(n);
        assertEquals(n, drain(store.allDocs("db", null, null, true, false, 0, DocumentStore::byIdRow)).size());
        List<ChangesSubspace.Change> changes = drain(store.changes("db", null, false, 0, (tx, db, c) -> c));
        assertEquals(n, changes.size());
        for (int i = 1; i < n; i++) assertTrue(changes.get(i - 1).seq().compareTo(changes.get(i).seq()) < 0, "sequences increase");
        Sequence mid = changes.get(n / 2).seq();
        assertEquals(n - n / 2 - 1, drain(store.changes("db", mid, false, 0, (tx, db, c) -> c)).size(), "since is exclusive");
        assertEquals(5, drain(store.changes("db", null, true, 5, (tx, db, c) -> c)).size());
        assertEquals(changes.getLast().seq(), store.info("db").updateSeq());
    }

    @Test
    void updateMovesTheChangesRowAndWakesWatchers() throws Exception {
        write(3);
        CompletableFuture<Void> w = store.watchWrites("db");
        assertFalse(w.isDone());
        var rev = store.get("db", "d00000", null, false).rev();
        assertTrue(store.update("db", List.of(DocUpdate.edit("d00000", rev, false, Json.NODES.objectNode())), true).getFirst().ok());
        w.get(5, TimeUnit.SECONDS);
        List<String> order = drain(store.changes("db", null, false, 0, (tx, db, c) -> c.id()));
        assertEquals(List.of("d00001", "d00002", "d00000"), order, "one row per doc, the updated one last");
    }

    @Test
    void localDocsScanSkipsBodyKeys() {
        for (String id : List.of("_local/a", "_local/b", "_local/c")) {
            store.putLocal("db", id, null, false, Json.NODES.objectNode().put("x", id).put("y", 1));
        }
        List<LocalDocuments.LocalDoc> all = drain(store.localDocs("db", null, null, true, false, 0, true));
        assertEquals(List.of("_local/a", "_local/b", "_local/c"), all.stream().map(LocalDocuments.LocalDoc::id).toList());
        assertEquals("_local/b", all.get(1).body().get("x").textValue());
        List<String> desc = drain(store.localDocs("db", "_local/c", "_local/b", false, true, 0, false)).stream().map(LocalDocuments.LocalDoc::id).toList();
        assertEquals(List.of("_local/c"), desc, "descending, end exclusive");
        assertEquals("0-1", drain(store.localDocs("db", "_local/b", null, true, false, 1, false)).getFirst().rev());
    }
}
