package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A tuple whose last element is a string or byte string ends in {@code 00}; a longer string that
 * starts with the same characters followed by NUL encodes as the same bytes followed by
 * {@code ff}. So {@code [prefix, strinc(prefix))} also holds every key of that other tuple: the
 * range of "everything under a tuple" must end at {@code prefix + ff}. These pin that the store
 * never reads or clears a neighbour's keys: two local documents whose ids differ by a trailing
 * NUL, and two revisions whose hash bytes differ the same way (a canonical 32-hex hash and the
 * 16-character text of the same bytes, which encodes with a 00 suffix).
 */
class TuplePrefixRangeTest {
    StoreFixture f;
    String db;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        db = f.newDb("prefix", 0);
    }

    @AfterEach
    void close() {
        f.close();
    }

    static ObjectNode body(String json) {
        try {
            return (ObjectNode) Json.MAPPER.readTree(json);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void localDocumentsWhoseIdsDifferByATrailingNul() {
        f.store.open(db).putLocal("_local/x\u0000y", null, false, body("{\"who\":\"x-nul-y\"}"));
        assertEquals("missing", assertThrows(StorageException.class, () -> f.store.open(db).getLocal("_local/x")).reason(),
                "_local/x does not exist");

        f.store.open(db).putLocal("_local/x", null, false, body("{\"who\":\"x\"}"));
        assertEquals("x", f.store.open(db).getLocal("_local/x").body().get("who").textValue());
        LocalDoc other = f.store.open(db).getLocal("_local/x\u0000y");
        assertEquals("x-nul-y", other.body().get("who").textValue(), "writing _local/x must not touch its neighbour");

        f.store.open(db).putLocal("_local/x", "0-1", true, Json.NODES.objectNode());
        assertEquals("x-nul-y", f.store.open(db).getLocal("_local/x\u0000y").body().get("who").textValue(), "nor deleting it");
        f.checkInvariants(db, 0);
    }

    @Test
    void revisionsWhoseHashBytesDifferByATrailingNul() {
        RevId canonical = RevId.parse("1-6162636465666768696a6b6c6d6e6f70"); // bytes "abcdefghijklmnop"
        RevId text = RevId.parse("1-abcdefghijklmnop");                     // bytes "abcdefghijklmnop" 00
        assertTrue(java.util.Arrays.equals(java.util.Arrays.copyOf(text.hashBytes(), 16), canonical.hashBytes()));

        assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", EditBranch.root(text, false), body("{\"v\":\"text\"}"))), false).getFirst().ok());
        assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", EditBranch.root(canonical, false), body("{\"v\":\"canonical\"}"))), false).getFirst().ok());
        assertEquals("canonical", f.store.open(db).get("d", canonical, false).body().get("v").textValue());
        assertEquals("text", f.store.open(db).get("d", text, false).body().get("v").textValue());
        f.checkInvariants(db, 0);

        // Extending the canonical leaf clears its body, and only its body.
        UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit("d", canonical, false, body("{\"v\":2}"))), true).getFirst();
        assertTrue(r.ok());
        assertEquals("text", f.store.open(db).get("d", text, false).body().get("v").textValue());
        f.checkInvariants(db, 0);
    }
}
