package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A model of per-document access (issue 28): random users with random roles, and an admin, write,
 * re-assign and delete documents with random {@code _access}; after every step each user's
 * listing ({@link SecuredDb#accessibleDocs}) and feed ({@link SecuredDb#accessibleChanges}, since
 * 0 and since a sequence remembered from an earlier step) equal the admin's view of the database
 * filtered by the rules, plus a revoked row for each document the user could once read and no
 * longer can, at the write that took it away. Run on a plain engine and with the engine's fault
 * injection (conflicts, too-old reads, and unknown results some of which committed).
 */
class AccessIndexModelTest {
    static final String SECURITY = "{\"members\":{\"roles\":[\"_users\"]},\"admins\":{\"roles\":[\"_admin\"]}}";
    static final List<String> ROLES = List.of("r0", "r1", "r2");
    static final int USERS = 5;
    static final int DOCS = 12;
    static final int STEPS = 120;

    /** What the model remembers of one user and one document they could once read. */
    record Seen(RevId lastRev, Sequence lostAt, RevId lostRev) {}

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyUsersListingsAreTheAdminsViewFilteredByTheRules(boolean faults) {
        EmbeddedOptions opts = EmbeddedOptions.inMemory();
        if (faults) opts = opts.withFaults(new FaultInjection(0.05, 0.02, 0.05, 0.5, 11L));
        Random rnd = new Random(faults ? 7 : 3);
        try (KvStore kv = EmbeddedKvStore.open(opts); Storage store = new Storage(kv, "{}")) {
            LocalDocumentsUnderFaultsTest.createRetrying(store.directory(), "acc", true);
            store.open("acc").setSecurity(SECURITY);
            UserCtx admin = new UserCtx("admin", List.of(UserCtx.ADMIN_ROLE), "default");
            List<UserCtx> users = new ArrayList<>();
            for (int i = 0; i < USERS; i++) {
                List<String> roles = new ArrayList<>();
                for (String r : ROLES) if (rnd.nextInt(3) == 0) roles.add(r);
                users.add(new UserCtx("u" + i, roles, "default"));
            }
            List<String> pool = new ArrayList<>(ROLES);
            for (UserCtx u : users) pool.add(u.name());
            List<Map<String, Seen>> seen = new ArrayList<>();
            List<Sequence> remembered = new ArrayList<>();
            for (int i = 0; i < USERS; i++) {
                seen.add(new HashMap<>());
                remembered.add(null);
            }
            int refused = 0;
            for (int step = 0; step < STEPS; step++) {
                boolean byAdmin = rnd.nextInt(3) == 0;
                UserCtx actor = byAdmin ? admin : users.get(rnd.nextInt(USERS));
                SecuredDb db = store.open("acc", actor, SecuredDb.Level.MEMBER);
                String id = "d" + rnd.nextInt(DOCS);
                DocInfo w = db.database().winner(id);
                ObjectNode body = Json.NODES.objectNode().put("step", step);
                ArrayNode access = body.putArray("_access");
                int n = rnd.nextInt(4);
                for (int k = 0; k < n; k++) access.add(pool.get(rnd.nextInt(pool.size())));
                if (!byAdmin && rnd.nextBoolean()) access.add(actor.name());
                boolean delete = w != null && !w.deleted() && rnd.nextInt(4) == 0;
                DocUpdate u = delete ? DocUpdate.edit(id, w.rev(), true, Json.NODES.objectNode())
                        : DocUpdate.edit(id, w == null || w.deleted() ? null : w.rev(), false, body);
                UpdateResult r = db.update(List.of(u), true).getFirst();
                if (!r.ok()) {
                    refused++;
                    assertEquals("access", r.error().reason(), r.error().toString());
                }
                check(store, users, seen, remembered, rnd);
            }
            assertTrue(refused > 0 && refused < STEPS, "some writes were refused, not all: " + refused);
        }
    }

    /** Every user's listings against the admin's view, then the model moves on to this state. */
    private static void check(Storage store, List<UserCtx> users, List<Map<String, Seen>> seen, List<Sequence> remembered, Random rnd) {
        Database raw = store.open("acc");
        // The admin's view: every document's winner, its _access, deleted or not, and its sequence.
        record Doc(String id, RevId rev, boolean deleted, List<String> access, Sequence seq) {}
        List<Doc> docs = new ArrayList<>();
        var c = raw.changes(null, ScanProperties.FORWARD, (r, ch) -> new Doc(ch.id(), ch.rev(), ch.deleted(),
                AccessRules.principals(r.get(ch.id(), ch.rev(), false).body()), ch.seq()));
        c.forEachRemaining(docs::add);
        for (int i = 0; i < users.size(); i++) {
            SecuredDb db = store.open("acc", users.get(i), SecuredDb.Level.MEMBER);
            UserCtx u = db.user(); // with the implicit _users role
            Map<String, Seen> model = seen.get(i);
            TreeMap<String, String> expectedDocs = new TreeMap<>(AccessIndex.ID_ORDER);
            TreeMap<Sequence, String> expectedFeed = new TreeMap<>();
            for (Doc d : docs) {
                Seen s = model.get(d.id());
                if (AccessRules.allows(u, d.access())) {
                    expectedDocs.put(d.id(), d.rev() + (d.deleted() ? " deleted" : ""));
                    expectedFeed.put(d.seq(), d.id() + " " + d.rev() + (d.deleted() ? " deleted" : ""));
                    model.put(d.id(), new Seen(d.rev(), null, null));
                } else if (s != null) {
                    // lost at this step if the model still had it visible
                    Seen lost = s.lostAt() != null ? s : new Seen(s.lastRev(), d.seq(), s.lastRev());
                    model.put(d.id(), lost);
                    expectedFeed.put(lost.lostAt(), d.id() + " " + AccessIndex.revokedRev(d.id(), lost.lostRev()) + " deleted");
                }
            }
            TreeMap<String, String> actualDocs = new TreeMap<>(AccessIndex.ID_ORDER);
            for (DocInfo d : db.accessibleDocs()) actualDocs.put(d.id(), d.rev() + (d.deleted() ? " deleted" : ""));
            assertEquals(expectedDocs, actualDocs, u.name() + "'s documents");
            assertEquals(expectedFeed, feed(db, null), u.name() + "'s changes since 0");
            Sequence since = remembered.get(i);
            if (since != null) assertEquals(new TreeMap<>(expectedFeed.tailMap(since, false)), feed(db, since), u.name() + "'s changes since " + since);
            if (!expectedFeed.isEmpty() && rnd.nextInt(4) == 0) remembered.set(i, expectedFeed.lastKey());
        }
    }

    private static TreeMap<Sequence, String> feed(SecuredDb db, Sequence since) {
        TreeMap<Sequence, String> out = new TreeMap<>();
        for (AccessIndex.AccessChange ch : db.accessibleChanges(since)) {
            String was = out.put(ch.seq(), ch.id() + " " + ch.feedRev() + (ch.deleted() || ch.revoked() ? " deleted" : ""));
            assertEquals(null, was, "one row per sequence");
        }
        return out;
    }
}
