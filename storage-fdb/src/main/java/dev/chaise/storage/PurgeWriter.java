package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.RevisionsSubspace.Branch;
import dev.chaise.storage.json.Json;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * CouchDB 3's purge ({@code couch_db_updater:purge_docs}) over RFC A-D: a purged leaf's edit
 * branch leaves the revisions subspace (RFC C), and with it the ancestors no other branch holds,
 * as {@code couch_key_tree:remove_leafs} drops them; its body (RFC A) and the attachment chunks no
 * remaining leaf names go too. A document left with leaves gets its new winner, a new changes row
 * at this commit's sequence (RFC D; CouchDB gives it a new update_seq likewise) and by-id entry
 * (RFC B); one left with none disappears from every subspace. The counters follow. Revisions
 * named that are not leaves are ignored, as in CouchDB.
 *
 * <p>A whole request is one transaction, guarded by a transaction id: a retry after
 * {@code commit_unknown_result} answers what the first attempt removed. Every document named
 * gets a purge record ({@link PurgedInfos}), removed anything or not, as CouchDB records every
 * request; derived data (views) drops the document through the {@link PurgeHook}s, and a
 * document that keeps leaves is written through the {@link DocumentWriteHook}s again.
 */
final class PurgeWriter {
    private final Storage storage;

    PurgeWriter(Storage storage) {
        this.storage = storage;
    }

    List<Purged> purge(Database db, List<PurgeRequest> requests) {
        List<Purged> out = db.runGuarded((tx, h) -> purge(tx, h, requests), PurgeWriter::encode, bytes -> decode(bytes, requests));
        storage.counts.databasePurges.increment();
        return out;
    }

    private List<Purged> purge(Transaction tx, DbHandle db, List<PurgeRequest> requests) {
        // Read every document first: the purge hooks read the database as it was (a winner's key
        // rewritten here holds a versionstamp this transaction cannot read back).
        record Plan(PurgeRequest request, List<Branch> all, List<Branch> removed, List<Branch> remaining) {}
        List<Plan> plans = new ArrayList<>(requests.size());
        List<Purged> out = new ArrayList<>(requests.size());
        for (PurgeRequest r : requests) {
            Set<RevId> asked = new HashSet<>(r.revs());
            List<Branch> all = RevisionsSubspace.all(tx, db, r.id());
            List<Branch> removed = new ArrayList<>();
            List<Branch> remaining = new ArrayList<>();
            for (Branch b : all) (asked.contains(b.branch().leaf()) ? removed : remaining).add(b);
            TreeSet<RevId> purgedRevs = new TreeSet<>();
            for (Branch b : removed) purgedRevs.add(b.branch().leaf());
            out.add(new Purged(r.id(), new ArrayList<>(purgedRevs)));
            plans.add(new Plan(r, all, removed, remaining));
        }
        DbReader before = DbReader.of(tx, db, storage.timer());
        for (Plan p : plans) {
            if (!p.removed().isEmpty()) for (PurgeHook hook : storage.purgeHooks()) hook.onPurge(tx, db, p.request().id(), before);
        }
        long[] deltas = new long[DbStats.Counter.values().length];
        int userVersion = 0;
        List<Kept> kept = new ArrayList<>();
        for (Plan p : plans) {
            PurgedInfos.add(tx, db, p.request().id(), new ArrayList<>(new TreeSet<>(p.request().revs())), userVersion++);
            if (p.removed().isEmpty()) continue;
            Kept k = removeLeaves(tx, db, p.request().id(), p.all(), p.removed(), p.remaining(), deltas, userVersion++);
            if (k != null) kept.add(k);
        }
        for (DbStats.Counter c : DbStats.Counter.values()) DbStats.add(tx, db, c, deltas[c.ordinal()]);
        PurgedInfos.trim(tx, db, requests.size(), PurgedInfos.limit(tx, db));
        rewrite(tx, db, kept);
        storage.dbUpdates().mark(db.name()); // an "updated" event in _db_updates, as couch_event notifies for a purge
        return out;
    }

    /** A document that keeps leaves, and its winner now. */
    private record Kept(String id, EditBranch winner, ObjectNode body) {}

    /**
     * One document's purged branches out of every subspace; its new winner, changes row and by-id
     * entry if it keeps any. Returns that winner, or null if nothing is left.
     */
    private static Kept removeLeaves(Transaction tx, DbHandle db, String id, List<Branch> all, List<Branch> removed, List<Branch> remaining,
                                     long[] deltas, int userVersion) {
        Branch oldWinner = null;
        for (Branch b : all) if (b.isWinnerRecord()) oldWinner = b;
        Set<ByteBuffer> goneDigests = new HashSet<>();
        for (Branch b : removed) {
            EditBranch e = b.branch();
            digests(DocumentBodies.read(tx, db, id, e.leaf(), e.deleted()), goneDigests);
            RevisionsSubspace.clear(tx, db, id, e);
            DocumentBodies.clear(tx, db, id, e.leaf(), e.deleted());
            deltas[DbStats.Counter.SIZE_EXTERNAL.ordinal()] -= b.externalSize();
            deltas[DbStats.Counter.SIZE_ACTIVE.ordinal()] -= b.activeSize();
        }
        if (oldWinner != null) ChangesSubspace.remove(tx, db, oldWinner.sequence());
        boolean wasLive = oldWinner != null && !oldWinner.branch().deleted();
        deltas[DbStats.Counter.WRITES.ordinal()]++;
        if (remaining.isEmpty()) {
            ByIdSubspace.clear(tx, db, id);
            byte[][] atts = AttachmentsSubspace.docRange(db, id);
            tx.clear(atts[0], atts[1]);
            deltas[(wasLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT).ordinal()]--;
            return null;
        }
        Branch winner = remaining.getFirst();
        for (Branch b : remaining) if (EditBranch.KEY_ORDER.compare(b.branch(), winner.branch()) > 0) winner = b;
        EditBranch w = winner.branch();
        ObjectNode body = DocumentBodies.read(tx, db, id, w.leaf(), w.deleted()); // before the winner's key is versionstamped
        RevisionsSubspace.writeWinner(tx, db, id, w, remaining.size(), winner.externalSize(), winner.activeSize(), userVersion);
        ChangesSubspace.add(tx, db, id, w.leaf(), remaining.size(), w.deleted(), userVersion);
        if (w.deleted()) ByIdSubspace.clear(tx, db, id);
        else ByIdSubspace.set(tx, db, id, w.leaf());
        if (wasLive == w.deleted()) {
            deltas[(wasLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT).ordinal()]--;
            deltas[(wasLive ? DbStats.Counter.DOC_DEL_COUNT : DbStats.Counter.DOC_COUNT).ordinal()]++;
        }
        Set<ByteBuffer> stillNamed = new HashSet<>();
        for (Branch b : remaining) digests(DocumentBodies.read(tx, db, id, b.branch().leaf(), b.branch().deleted()), stillNamed);
        goneDigests.removeAll(stillNamed);
        for (ByteBuffer md5 : goneDigests) {
            byte[][] r = AttachmentsSubspace.range(db, id, md5.array());
            tx.clear(r[0], r[1]);
        }
        return new Kept(id, w, body == null ? Json.NODES.objectNode() : body);
    }

    private static void digests(ObjectNode body, Set<ByteBuffer> into) {
        if (body == null) return;
        for (JsonNode m : body.path("_attachments")) {
            if (m.path("digest").isTextual()) into.add(ByteBuffer.wrap(AttachmentsSubspace.md5Of(m.get("digest").textValue())));
        }
    }

    /**
     * Documents that keep leaves are written again through the write hooks: their winner may be
     * another revision now, and an index that follows writes must index it (the purge hooks
     * dropped its rows).
     */
    private void rewrite(Transaction tx, DbHandle db, List<Kept> docs) {
        List<DocumentWriteHook> hooks = storage.hooks();
        if (hooks.isEmpty() || docs.isEmpty()) return;
        DbReader reader = DbReader.of(tx, db, storage.timer());
        for (Kept k : docs) {
            // The winner's key holds a versionstamp this transaction cannot read back: the change names it, and its body.
            DocumentWriteHook.Change c = new DocumentWriteHook.Change(db, k.id(), null, false, k.winner().leaf(), k.winner().deleted(), k.body(), reader);
            for (DocumentWriteHook h : hooks) h.onWrite(tx, c);
        }
    }

    private static byte[] encode(List<Purged> results) {
        TupleBytes t = new TupleBytes(results.size() * 40);
        for (Purged p : results) {
            List<Object> revs = new ArrayList<>(p.revs().size());
            for (RevId r : p.revs()) revs.add(r.toString());
            t.add(Tuple.fromList(revs));
        }
        return t.toArray();
    }

    private static List<Purged> decode(byte[] bytes, List<PurgeRequest> requests) {
        Tuple t = Tuple.fromBytes(bytes);
        List<Purged> out = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            Tuple revs = t.getNestedTuple(i);
            List<RevId> rs = new ArrayList<>(revs.size());
            for (int j = 0; j < revs.size(); j++) rs.add(RevId.parse(revs.getString(j)));
            out.add(new Purged(requests.get(i).id(), rs));
        }
        return out;
    }
}
