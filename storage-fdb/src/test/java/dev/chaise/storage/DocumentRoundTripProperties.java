package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvLimits;
import dev.chaise.storage.json.Json;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Generated documents written through {@link DocumentStore#update} (interactive and replicated)
 * and read back through {@link DocumentStore#get}: the same JSON, exactly (node classes, number
 * bits, strings with NULs and astral characters, 100 KB+ strings, deep and wide shapes, empty
 * containers). A document over the size limit or with a storage key over FDB's is refused and
 * leaves nothing behind. The invariants hold after every try; the second property runs the same
 * with 1020, 1021 (half really committed) and 1007 each injected into 4% of commits.
 */
class DocumentRoundTripProperties {
    private static StoreFixture plain;
    private static StoreFixture faulty;

    @BeforeContainer
    static void open() {
        plain = StoreFixture.open();
        faulty = StoreFixture.withFaults(0.04, 20240601L);
    }

    @AfterContainer
    static void close() {
        System.out.println("round trip with faults: " + faulty.injectedFaults() + " injected faults, " + faulty.commitsRetried() + " retries");
        plain.close();
        faulty.close();
    }

    @Provide
    Arbitrary<ObjectNode> documents() {
        return JsonArbitraries.documents();
    }

    @Provide
    Arbitrary<String> docIds() {
        return JsonArbitraries.docIds();
    }

    @Property(tries = 300)
    void whatIsWrittenIsReadBack(@ForAll("docIds") String id, @ForAll("documents") ObjectNode body, @ForAll("documents") ObjectNode next) {
        roundTrip(plain, id, body, next);
    }

    @Property(tries = 120)
    void whatIsWrittenIsReadBackDespiteCommitFaults(@ForAll("docIds") String id, @ForAll("documents") ObjectNode body,
                                                    @ForAll("documents") ObjectNode next) {
        roundTrip(faulty, id, body, next);
    }

    private static void roundTrip(StoreFixture f, String id, ObjectNode body, ObjectNode next) {
        String db = f.newDb("rt", 0);
        Storage store = f.store;
        ObjectNode original = body.deepCopy();

        // 1. create
        RevId r1 = RevHasher.newRevId(null, false, body, List.of());
        UpdateResult c = store.open(db).update(List.of(DocUpdate.edit(id, null, false, body)), true).getFirst();
        if (!expectOutcome(f, db, id, r1, body, c)) return;
        assertEquals(original, body, "the store must not change the caller's body");
        assertStored(store, db, id, r1, false, body);

        // 2. update: the old leaf's body goes, the new one is exact
        RevId r2 = RevHasher.newRevId(r1, false, next, List.of());
        UpdateResult u = store.open(db).update(List.of(DocUpdate.edit(id, r1, false, next)), true).getFirst();
        if (expectOutcome(f, db, id, r2, next, u)) {
            assertStored(store, db, id, r2, false, next);
            assertEquals("missing", assertThrows(StorageException.class, () -> store.open(db).get(id, r1, false)).reason());
            // 3. delete, keeping fields in the tombstone
            RevId r3 = RevHasher.newRevId(r2, true, body, List.of());
            UpdateResult d = store.open(db).update(List.of(DocUpdate.edit(id, r2, true, body)), true).getFirst();
            assertEquals(r3, d.rev());
            assertEquals("deleted", assertThrows(StorageException.class, () -> store.open(db).get(id, null, false)).reason());
            assertStored(store, db, id, r3, true, body);
        }

        // 4. replicated in under a made-up history: the body is as exact
        String rid = id + "/replica";
        EditBranch path = EditBranch.fromRevisions(3, List.of("cafe", "beef0000000000000000000000000000", "0-a"), false);
        UpdateResult rep = store.open(db).update(List.of(DocUpdate.replicated(rid, path, next)), false).getFirst();
        if (expectOutcome(f, db, rid, path.leaf(), next, rep)) {
            assertStored(store, db, rid, path.leaf(), false, next);
            assertEquals(path.revs(), store.open(db).get(rid, null, true).branches().getFirst().revs());
        }
        Invariants.Report report = f.checkInvariants(db, 0);
        Statistics.label("docs stored").collect(report.docs());
    }

    /** Checks the write's outcome against what the document's size and keys allow; true if it was written. */
    private static boolean expectOutcome(StoreFixture f, String db, String id, RevId rev, ObjectNode body, UpdateResult r) {
        long size = ExplodedJson.externalSize(body);
        int longestKey = longestKey(body, docsPrefixLength(f, db, id, rev));
        if (size > Storage.DEFAULT_MAX_DOCUMENT_SIZE) {
            Statistics.label("outcome").collect("too large");
            assertEquals(StorageException.Kind.DOCUMENT_TOO_LARGE, r.error() == null ? null : r.error().kind());
        } else if (longestKey > KvLimits.MAX_KEY_BYTES) {
            Statistics.label("outcome").collect("path too long");
            assertEquals(StorageException.Kind.BAD_REQUEST, r.error() == null ? null : r.error().kind());
            assertTrue(r.error().reason().startsWith("Document field path too long at /"), r.error().reason());
        } else if (kvBytes(f, db, id, rev, body) > DocumentBodies.MAX_KV_BYTES) {
            Statistics.label("outcome").collect("too many KV bytes");
            assertEquals(StorageException.Kind.DOCUMENT_TOO_LARGE, r.error() == null ? null : r.error().kind());
        } else {
            Statistics.label("outcome").collect("stored");
            assertNull(r.error(), () -> "unexpected " + r.error());
            assertEquals(rev, r.rev());
            return true;
        }
        // Nothing of a refused write may remain (the first write of the try leaves no document).
        if (rev.pos() == 1) assertEquals(List.of(), f.store.open(db).branches(id));
        f.checkInvariants(db, 0);
        return false;
    }

    private static void assertStored(Storage store, String db, String id, RevId rev, boolean deleted, ObjectNode body) {
        StoredDoc byRev = store.open(db).get(id, rev, false);
        assertEquals(rev, byRev.rev());
        assertEquals(deleted, byRev.deleted());
        JsonArbitraries.assertSameAsStored(body, byRev.body());
        if (!deleted) {
            StoredDoc winner = store.open(db).get(id, null, false);
            assertEquals(rev, winner.rev());
            JsonArbitraries.assertSameAsStored(body, winner.body());
        }
    }

    /** The body's KV bytes as the codec (tested on its own) explodes it under the real prefix. */
    private static long kvBytes(StoreFixture f, String db, String id, RevId rev, ObjectNode body) {
        byte[] prefix = f.dirs.open(db).space().pack(KeySpace.Db.DOCS, id, true, rev.pos(), rev.hashBytes());
        return ExplodedJson.activeSize(ExplodedJson.explode(prefix, body));
    }

    private static int docsPrefixLength(StoreFixture f, String db, String id, RevId rev) {
        byte[] dbPrefix = f.dirs.open(db).space().prefix();
        return dbPrefix.length + Tuple.from(KeySpace.Db.DOCS, id, true, rev.pos(), rev.hashBytes()).pack().length;
    }

    /** The longest key the exploded body would need: the prefix plus the packed path of its deepest leaf. */
    private static int longestKey(JsonNode node, int keyLength) {
        if (!node.isContainerNode() || node.isEmpty()) return keyLength;
        int longest = 0;
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                longest = Math.max(longest, longestKey(e.getValue(), keyLength + Tuple.from(e.getKey()).pack().length));
            }
        } else {
            for (int i = 0; i < node.size(); i++) {
                longest = Math.max(longest, longestKey(node.get(i), keyLength + Tuple.from((long) i).pack().length));
            }
        }
        return longest;
    }

    @Property(tries = 20)
    void emptyAndTinyBodies(@ForAll("docIds") String id) {
        String db = plain.newDb("tiny", 0);
        for (String json : List.of("{}", "{\"\":{}}", "{\"a\":[]}", "{\"\\u0000\":\"\\u0000\"}", "{\"n\":-0.0}", "{\"n\":1e400}".replace("1e400", "123456789012345678901234567890"))) {
            ObjectNode b;
            try {
                b = (ObjectNode) Json.MAPPER.readTree(json);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            String docId = id + json;
            UpdateResult r = plain.store.open(db).update(List.of(DocUpdate.edit(docId, null, false, b)), true).getFirst();
            assertNull(r.error());
            assertStored(plain.store, db, docId, r.rev(), false, b);
        }
        plain.checkInvariants(db, 0);
    }
}
