package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The storage side of validate_doc_update: where checks run, what a rejection leaves, and that every opened check is closed. */
class DocumentValidatorTest {

    /** Rejects documents with {@code "bad": true}; records what it saw; counts opens and closes. */
    static final class Recording implements DocumentValidator {
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public Checks open(DbReader snapshot) {
            opened.incrementAndGet();
            return new Checks() {
                @Override
                public void check(ObjectNode newDoc, java.util.function.Supplier<ObjectNode> oldDoc) {
                    ObjectNode old = oldDoc.get();
                    seen.add(newDoc.get("_id").asText() + " <- " + (old == null ? "null" : old.path("_rev").asText()));
                    if (newDoc.path("bad").asBoolean()) throw new StorageException(StorageException.Kind.FORBIDDEN, "bad " + newDoc.get("_id").asText());
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                }
            };
        }
    }

    static ObjectNode body(boolean bad) {
        return Json.NODES.objectNode().put("bad", bad);
    }

    @Test
    void aRejectedDocumentFailsAloneAndWritesNothing() {
        try (StoreFixture f = StoreFixture.open()) {
            String db = f.newDb("v", 0);
            Recording v = new Recording();
            List<UpdateResult> r = f.store.open(db).update(List.of(
                    DocUpdate.edit("a", null, false, body(false)),
                    DocUpdate.edit("b", null, false, body(true)),
                    DocUpdate.edit("_design/c", null, false, body(true)),
                    DocUpdate.edit("d", null, false, body(false))), true, v);
            assertTrue(r.get(0).ok() && r.get(2).ok() && r.get(3).ok(), r.toString());
            assertEquals(StorageException.Kind.FORBIDDEN, r.get(1).error().kind());
            assertEquals("bad b", r.get(1).error().reason());
            assertEquals(List.of("a <- null", "b <- null", "d <- null"), v.seen, "design documents are not checked");
            assertEquals(List.of(), f.store.open(db).branches("b"));
            assertEquals(v.opened.get(), v.closed.get());
            f.checkInvariants(db, 0);

            v.seen.clear();
            r = f.store.open(db).update(List.of(DocUpdate.edit("a", r.get(0).rev(), true, Json.NODES.objectNode())), true, v);
            assertTrue(r.getFirst().ok(), r.toString());
            assertEquals(List.of("a <- " + f.store.open(db).branches("a").getFirst().parent()), v.seen, "an edit is checked against the revision it edits");
        }
    }

    @Test
    void allOrNothingWritesNoneWhenOneIsRejected() {
        try (StoreFixture f = StoreFixture.open()) {
            String db = f.newDb("v", 0);
            Recording v = new Recording();
            List<UpdateResult> r = f.store.open(db).updateAllOrNothing(List.of(
                    DocUpdate.edit("a", null, false, body(false)),
                    DocUpdate.edit("b", null, false, body(true))), true, v);
            assertNull(r.get(0).error());
            assertEquals(StorageException.Kind.FORBIDDEN, r.get(1).error().kind());
            assertEquals(List.of(), f.store.open(db).branches("a"));
            assertEquals(v.opened.get(), v.closed.get());
            f.checkInvariants(db, 0);
        }
    }

    @Test
    void checksAreClosedOnEveryAttemptUnderFaults() {
        try (StoreFixture f = StoreFixture.withFaults(0.1, 7)) {
            String db = f.newDb("v", 0);
            Recording v = new Recording();
            int bad = 0;
            for (int i = 0; i < 60; i++) {
                List<DocUpdate> batch = new ArrayList<>();
                for (int j = 0; j < 5; j++) batch.add(DocUpdate.edit("d" + i + "-" + j, null, false, body((i + j) % 3 == 0)));
                for (UpdateResult r : f.store.open(db).update(batch, true, v)) {
                    if (!r.ok()) {
                        assertEquals(StorageException.Kind.FORBIDDEN, r.error().kind(), r.toString());
                        bad++;
                    }
                }
            }
            assertEquals(100, bad);
            assertTrue(v.opened.get() >= 60, "one check per transaction attempt: " + v.opened.get());
            assertEquals(v.opened.get(), v.closed.get());
            f.checkInvariants(db, 0);
        }
    }
}
