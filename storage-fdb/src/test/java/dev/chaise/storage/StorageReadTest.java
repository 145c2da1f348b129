package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Storage#read}: the database opened for a user and read in one transaction, its cached
 * handle checked in that transaction. Two {@code Storage}s on one KV store stand for two servers
 * on one FDB cluster: each caches handles of its own, and a change made through one must be seen
 * by the other's next read.
 */
class StorageReadTest extends TwoServersTest {
    static final UserCtx BOB = new UserCtx("bob", List.of("readers"), "default");
    static final String MEMBERS = "{\"members\":{\"roles\":[\"readers\"]}}";

    StorageReadTest() {
        super(MEMBERS);
    }

    @BeforeEach
    void open() throws Exception {
        here.create("db").updateUnchecked(List.of(DocUpdate.edit("a", null, false, body("{\"x\":1}"))), true);
    }

    static ObjectNode body(String json) throws Exception {
        return (ObjectNode) Json.MAPPER.readTree(json);
    }

    int readX(Storage s, UserCtx user) {
        return s.read("db", user, SecuredDb.Level.MEMBER, (db, r) -> r.get("a", null, false).body().get("x").intValue());
    }

    @Test
    void readsAsOpenThenRead() {
        assertEquals(1, readX(here, BOB));
        assertEquals(1, here.openDatabases(), "the handle is cached for the next request");
        StorageException missing = assertThrows(StorageException.class,
                () -> here.read("nope", BOB, SecuredDb.Level.MEMBER, (db, r) -> fail("no body for a missing database")));
        assertEquals(StorageException.Kind.NOT_FOUND, missing.kind());
        assertEquals("Database does not exist.", missing.reason());
        assertEquals(StorageException.Kind.ILLEGAL_DATABASE_NAME,
                assertThrows(StorageException.class, () -> here.read("A", BOB, SecuredDb.Level.MEMBER, (db, r) -> null)).kind());
    }

    @Test
    void refusesBeforeTheBodyRuns() {
        AtomicInteger runs = new AtomicInteger();
        UserCtx stranger = new UserCtx("eve", List.of(), "default");
        StorageException e = assertThrows(StorageException.class,
                () -> here.read("db", stranger, SecuredDb.Level.MEMBER, (db, r) -> runs.incrementAndGet()));
        assertEquals(StorageException.Kind.FORBIDDEN, e.kind());
        assertEquals(StorageException.Kind.UNAUTHORIZED, assertThrows(StorageException.class,
                () -> here.read("db", UserCtx.ANONYMOUS, SecuredDb.Level.MEMBER, (db, r) -> runs.incrementAndGet())).kind());
        assertEquals(0, runs.get());
    }

    @Test
    void seesASecurityChangeMadeByAnotherServer() {
        assertEquals(1, readX(here, BOB)); // cached here with bob a member
        there.open("db").setSecurity("{\"members\":{\"names\":[\"alice\"]}}");
        assertEquals(StorageException.Kind.FORBIDDEN, assertThrows(StorageException.class, () -> readX(here, BOB)).kind());
        there.open("db").setSecurity(MEMBERS);
        assertEquals(1, readX(here, BOB));
    }

    @Test
    void seesADeletionAndRecreationByAnotherServer() throws Exception {
        assertEquals(1, readX(here, BOB)); // cached here
        there.delete("db");
        there.create("db").updateUnchecked(List.of(DocUpdate.edit("a", null, false, body("{\"x\":2}"))), true);
        assertEquals(2, readX(here, BOB), "the database as it is now, not the cached one");
        there.delete("db");
        StorageException gone = assertThrows(StorageException.class, () -> readX(here, BOB));
        assertEquals(StorageException.Kind.NOT_FOUND, gone.kind());
        assertEquals("Database does not exist.", gone.reason());
    }
}
