package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Storage#openToUpdate}: a database opened from the cached handle, with no transaction of
 * its own, for one write whose transaction checks the handle. Two {@code Storage}s on one KV
 * store stand for two servers on one FDB cluster (as in {@link StorageReadTest}): a change made
 * through one must decide the other's next write, though the other's cache has not seen it.
 */
class StorageOpenToUpdateTest extends TwoServersTest {
    static final UserCtx BOB = new UserCtx("bob", List.of("writers"), "default");
    static final String MEMBERS = "{\"members\":{\"roles\":[\"writers\"]}}";
    static final String ALICE_ONLY = "{\"members\":{\"names\":[\"alice\"]}}";

    StorageOpenToUpdateTest() {
        super(MEMBERS);
    }

    @BeforeEach
    void open() {
        here.create("db");
    }

    static DocUpdate doc(String id, int x) throws Exception {
        return DocUpdate.edit(id, null, false, (ObjectNode) Json.MAPPER.readTree("{\"x\":" + x + "}"));
    }

    UpdateResult put(Storage s, UserCtx user, String id, int x) throws Exception {
        return s.openToUpdate("db", user, SecuredDb.Level.MEMBER).updateOne(doc(id, x), true);
    }

    static StorageException.Kind refusal(Executable e) {
        return assertThrows(StorageException.class, e::run).kind();
    }

    interface Executable {
        void run() throws Exception;
    }

    @Test
    void opensAsOpenDoes() throws Exception {
        assertTrue(put(here, BOB, "a", 1).ok());
        assertEquals(1, here.open("db").get("a", null, false).body().get("x").intValue());
        assertEquals(StorageException.Kind.NOT_FOUND, refusal(() -> here.openToUpdate("nope", BOB, SecuredDb.Level.MEMBER)));
        assertEquals(StorageException.Kind.ILLEGAL_DATABASE_NAME, refusal(() -> here.openToUpdate("A", BOB, SecuredDb.Level.MEMBER)));
        assertEquals(StorageException.Kind.FORBIDDEN, refusal(() -> put(here, new UserCtx("eve", List.of(), "default"), "b", 1)));
        assertEquals(StorageException.Kind.UNAUTHORIZED, refusal(() -> put(here, UserCtx.ANONYMOUS, "b", 1)));
    }

    @Test
    void aSecurityEditByAnotherServerDecidesTheWrite() throws Exception {
        assertTrue(put(here, BOB, "a", 1).ok()); // cached here with bob a member
        there.open("db").setSecurity(ALICE_ONLY);
        // Admitted by the cached handle, refused by the write's own transaction: nothing written.
        SecuredDb stale = here.openToUpdate("db", BOB, SecuredDb.Level.MEMBER);
        assertEquals(StorageException.Kind.FORBIDDEN, refusal(() -> stale.updateOne(doc("b", 2), true)));
        assertNull(there.open("db").winner("b"));
        there.open("db").setSecurity(MEMBERS);
        assertTrue(put(here, BOB, "b", 2).ok(), "the cache now refuses bob: asked again in a transaction");
    }

    @Test
    void aDeletionOrRecreationByAnotherServerDecidesTheWrite() throws Exception {
        assertTrue(put(here, BOB, "a", 1).ok()); // cached here
        there.delete("db");
        there.create("db", DbProps.PLAIN);
        SecuredDb stale = here.openToUpdate("db", BOB, SecuredDb.Level.MEMBER);
        assertTrue(stale.updateOne(doc("a", 2), true).ok(), "a new document of the database as it is now");
        assertEquals(2, there.open("db").get("a", null, false).body().get("x").intValue());
        assertEquals(1, there.open("db").get("a", null, false).rev().pos());
        SecuredDb gone = here.openToUpdate("db", BOB, SecuredDb.Level.MEMBER);
        there.delete("db");
        StorageException e = assertThrows(StorageException.class, () -> gone.updateOne(doc("b", 1), true));
        assertEquals(StorageException.Kind.NOT_FOUND, e.kind());
        assertEquals("Database does not exist.", e.reason());
    }
}
