package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A user's listings in an access database are merges of their principals' ranges read as far as
 * they are used ({@link AccessIndex}): a limit of n reads about n rows of each range, and a
 * document under the user's name and one of their roles at different sequences shows once, as its
 * last change among them.
 */
class AccessIndexStreamTest {
    static final UserCtx ADMIN = new UserCtx("admin", List.of(UserCtx.ADMIN_ROLE), "default");
    static final UserCtx BOB = new UserCtx("bob", List.of("team"), "default");

    private static Storage open(KvStore kv) {
        Storage store = new Storage(kv, "{}");
        LocalDocumentsUnderFaultsTest.createRetrying(store.directory(), "acc", true);
        store.open("acc").setSecurity(AccessIndexModelTest.SECURITY);
        return store;
    }

    private static RevId put(SecuredDb db, String id, RevId rev, String... access) {
        ObjectNode body = Json.NODES.objectNode();
        var a = body.putArray("_access");
        for (String p : access) a.add(p);
        UpdateResult r = db.update(List.of(DocUpdate.edit(id, rev, false, body)), true).getFirst();
        assertTrue(r.ok(), String.valueOf(r.error()));
        return r.rev();
    }

    @Test
    void aLimitReadsAboutThatManyRowsOfEachRange() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage store = open(kv)) {
            SecuredDb admin = store.open("acc", ADMIN, SecuredDb.Level.MEMBER);
            List<DocUpdate> docs = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                ObjectNode body = Json.NODES.objectNode();
                body.putArray("_access").add(i % 2 == 0 ? "bob" : "team");
                docs.add(DocUpdate.edit(String.format("d%05d", i), null, false, body));
            }
            admin.update(docs, true);
            SecuredDb bob = store.open("acc", BOB, SecuredDb.Level.MEMBER);

            long before = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED);
            List<String> ids = new ArrayList<>();
            bob.accessibleDocs(null, Database.IdRange.ALL, ScanProperties.of(false, 10)).forEachRemaining(d -> ids.add(d.id()));
            long read = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED) - before;
            assertEquals(List.of("d00000", "d00001", "d00002", "d00003", "d00004", "d00005", "d00006", "d00007", "d00008", "d00009"), ids);
            assertTrue(read <= 20, "10 rows of each of bob's two non-empty ranges, not 3000: " + read);

            before = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED);
            ids.clear();
            bob.accessibleDocs(null, new Database.IdRange("d02000", null, true), ScanProperties.of(true, 3)).forEachRemaining(d -> ids.add(d.id()));
            read = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED) - before;
            assertEquals(List.of("d02000", "d01999", "d01998"), ids);
            assertTrue(read <= 6, "backwards from a start key too: " + read);

            before = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED);
            Iterator<AccessIndex.AccessChange> feed = bob.accessibleChanges(null, ScanProperties.of(false, 5));
            List<String> changed = new ArrayList<>();
            feed.forEachRemaining(c -> changed.add(c.id()));
            read = store.timer().count(StorageCounts.CURSOR_ROWS_SCANNED) - before;
            // A feed is in sequence order, and a bulk write's parts commit in any order: the first
            // five are the database's first five changes (every document is bob's or his role's).
            List<String> firstChanges = new ArrayList<>();
            store.open("acc").changes(null, ScanProperties.of(false, 5), (r, ch) -> ch.id()).forEachRemaining(firstChanges::add);
            assertEquals(5, firstChanges.size());
            assertEquals(firstChanges, changed);
            assertTrue(read <= 10, "the feed too: " + read);

            int all = 0;
            for (DocInfo ignored : bob.accessibleDocs()) all++;
            assertEquals(3000, all, "and the whole listing, across transactions of 1000 rows");
        }
    }

    @Test
    void aDocumentUnderTheNameAndARoleAtDifferentSequencesShowsOnceAtItsLastChange() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage store = open(kv)) {
            SecuredDb admin = store.open("acc", ADMIN, SecuredDb.Level.MEMBER);
            SecuredDb bob = store.open("acc", BOB, SecuredDb.Level.MEMBER);
            RevId r1 = put(admin, "x", null, "team");
            RevId r2 = put(admin, "x", r1, "bob"); // team's row revoked, bob's visible, one sequence
            Sequence s2 = store.open("acc").read(r -> r.updateSeq());
            RevId r3 = put(admin, "x", r2, "bob"); // bob's row moves on; team's stays revoked at s2
            Sequence s3 = store.open("acc").read(r -> r.updateSeq());
            put(admin, "other", null, "eve");

            assertEquals(List.of("x " + r3), docs(bob));
            assertEquals(List.of(s3 + " x " + r3), feed(bob, null, false));
            assertEquals(List.of(s3 + " x " + r3), feed(bob, s2, false));
            assertEquals(List.of(s3 + " x " + r3), feed(bob, null, true));

            RevId r4 = put(admin, "x", r3, "team"); // the other way round: bob's row revoked, team's visible
            RevId r5 = put(admin, "x", r4, "team"); // team's row moves on; bob's stays revoked
            Sequence s5 = store.open("acc").read(r -> r.updateSeq());
            assertEquals(List.of("x " + r5), docs(bob));
            assertEquals(List.of(s5 + " x " + r5), feed(bob, null, false));
            assertEquals(List.of(s5 + " x " + r5), feed(bob, s3, false));
            assertEquals(List.of(s5 + " x " + r5), feed(bob, null, true));

            put(admin, "x", r5, "eve"); // now neither may read it: revoked under both, team's row the later
            Sequence s6 = store.open("acc").read(r -> r.updateSeq());
            String revoked = s6 + " x " + AccessIndex.revokedRev("x", r5) + " revoked";
            assertEquals(List.of(), docs(bob));
            assertEquals(List.of(revoked), feed(bob, null, false));
            assertEquals(List.of(revoked), feed(bob, s5, false));
            assertEquals(List.of(revoked), feed(bob, null, true));
        }
    }

    private static List<String> docs(SecuredDb db) {
        List<String> out = new ArrayList<>();
        for (DocInfo d : db.accessibleDocs()) out.add(d.id() + " " + d.rev() + (d.deleted() ? " deleted" : ""));
        List<String> live = new ArrayList<>();
        db.accessibleDocs(null, Database.IdRange.ALL, ScanProperties.FORWARD).forEachRemaining(d -> live.add(d.id() + " " + d.rev()));
        assertEquals(out, live, "no deleted documents here: both listings agree");
        return out;
    }

    private static List<String> feed(SecuredDb db, Sequence since, boolean descending) {
        List<String> out = new ArrayList<>();
        db.accessibleChanges(since, ScanProperties.of(descending, 0))
                .forEachRemaining(c -> out.add(c.seq() + " " + c.id() + " " + c.feedRev() + (c.revoked() ? " revoked" : "")));
        return out;
    }
}
