package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A design document's write or purge stamps its database's directory entry
 * ({@link DatabaseDirectory#designChanged}), as a metadata edit does; a plain document's does not.
 * What views caches from design documents (validate_doc_update functions, interactive index
 * definitions) is kept by the entry's bytes on the strength of this, on every server sharing the
 * store: a second {@code Storage} on the same KV store stands for another server.
 */
class DesignStampTest extends TwoServersTest {
    DesignStampTest() {
        super("{}");
    }

    @BeforeEach
    void open() {
        here.create("db");
    }

    static DocUpdate doc(String id) throws Exception {
        return DocUpdate.edit(id, null, false, (ObjectNode) Json.MAPPER.readTree("{\"validate_doc_update\":\"function(){}\"}"));
    }

    byte[] entry() {
        return here.open("db").handle().entry();
    }

    @Test
    void designDocumentsStampTheEntryAndPlainOnesDoNot() throws Exception {
        byte[] before = entry();
        Database db = there.open("db");
        assertTrue(db.updateUnchecked(List.of(doc("a")), true).getFirst().ok());
        assertArrayEquals(before, entry(), "a plain document leaves cached handles as they are");

        UpdateResult written = db.updateUnchecked(List.of(doc("_design/v")), true).getFirst();
        byte[] afterWrite = entry();
        assertFalse(java.util.Arrays.equals(before, afterWrite), "written through another server, seen here");
        assertEquals(1, here.open("db").read(DbReader::designDocs).size());

        UpdateResult deleted = db.updateUnchecked(List.of(DocUpdate.edit("_design/v", written.rev(), true, Json.NODES.objectNode())), true).getFirst();
        byte[] afterDelete = entry();
        assertFalse(java.util.Arrays.equals(afterWrite, afterDelete));
        assertEquals(0, here.open("db").read(DbReader::designDocs).size());

        there.open("db").purge(List.of(new PurgeRequest("_design/v", List.of(deleted.rev()))));
        assertFalse(java.util.Arrays.equals(afterDelete, entry()), "a purge of a design document too");
    }
}
