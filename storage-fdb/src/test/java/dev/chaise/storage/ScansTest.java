package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.DocInfo;
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
    Storage store;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        store = new Storage(kv, "{}");
        store.create("db");
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
        store.open("db").update(docs, true).forEach(r -> assertTrue(r.ok()));
    }

    static <T> List<T> drain(Cursor<T> c) {
        List<T> out = new ArrayList<>();
        c.forEachRemaining(out::add);
        return out;
    }

    @Test
    void allDocsBoundsAndDirection() {
        write(10);
        List<String> ids = drain(allDocs("d00002", "d00005", true, false, 0)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00002", "d00003", "d00004", "d00005"), ids);
        ids = drain(allDocs("d00002", "d00005", false, false, 0)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00002", "d00003", "d00004"), ids);
        ids = drain(allDocs("d00005", "d00002", true, true, 2)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00005", "d00004"), ids);
        ids = drain(allDocs("d00005", "d00002", false, true, 0)).stream().map(DocInfo::id).toList();
        assertEquals(List.of("d00005", "d00004", "d00003"), ids);
    }

    @Test
    void scansSpanTransactions() {
        int n = ScanProperties.ROWS_PER_TRANSACTION * 2 + 17;
        write(n);
        assertEquals(n, drain(allDocs(null, null, true, false, 0)).size());
        List<Change> changes = drain(changes(null, false, 0));
        assertEquals(n, changes.size());
        for (int i = 1; i < n; i++) assertTrue(changes.get(i - 1).seq().compareTo(changes.get(i).seq()) < 0, "sequences increase");
        Sequence mid = changes.get(n / 2).seq();
        assertEquals(n - n / 2 - 1, drain(changes(mid, false, 0)).size(), "since is exclusive");
        assertEquals(5, drain(changes(null, true, 5)).size());
        assertEquals(changes.getLast().seq(), store.open("db").info().updateSeq());
    }

    @Test
    void updateMovesTheChangesRowAndWakesWatchers() throws Exception {
        write(3);
        CompletableFuture<Void> w = store.open("db").watchWrites();
        assertFalse(w.isDone());
        var rev = store.open("db").get("d00000", null, false).rev();
        assertTrue(store.open("db").update(List.of(DocUpdate.edit("d00000", rev, false, Json.NODES.objectNode())), true).getFirst().ok());
        w.get(5, TimeUnit.SECONDS);
        List<String> order = drain(changes(null, false, 0)).stream().map(Change::id).toList();
        assertEquals(List.of("d00001", "d00002", "d00000"), order, "one row per doc, the updated one last");
    }

    @Test
    void localDocsScanSkipsBodyKeys() {
        for (String id : List.of("_local/a", "_local/b", "_local/c")) {
            store.open("db").putLocal(id, null, false, Json.NODES.objectNode().put("x", id).put("y", 1));
        }
        List<LocalDoc> all = drain(localDocs(null, null, true, false, 0, true));
        assertEquals(List.of("_local/a", "_local/b", "_local/c"), all.stream().map(LocalDoc::id).toList());
        assertEquals("_local/b", all.get(1).body().get("x").textValue());
        List<String> desc = drain(localDocs("_local/c", "_local/b", false, true, 0, false)).stream().map(LocalDoc::id).toList();
        assertEquals(List.of("_local/c"), desc, "descending, end exclusive");
        assertEquals("0-1", drain(localDocs("_local/b", null, true, false, 1, false)).getFirst().rev());
    }

    Cursor<DocInfo> allDocs(String start, String end, boolean inclusiveEnd, boolean descending, long limit) {
        return store.open("db").allDocs(new Database.IdRange(start, end, inclusiveEnd), ScanProperties.of(descending, limit), null, (r, d) -> d);
    }

    Cursor<Change> changes(Sequence since, boolean descending, long limit) {
        return store.open("db").changes(since, ScanProperties.of(descending, limit), (r, c) -> c);
    }

    Cursor<LocalDoc> localDocs(String start, String end, boolean inclusiveEnd, boolean descending, long limit, boolean bodies) {
        return store.open("db").localDocs(new Database.IdRange(start, end, inclusiveEnd), ScanProperties.of(descending, limit), null, bodies);
    }
}
