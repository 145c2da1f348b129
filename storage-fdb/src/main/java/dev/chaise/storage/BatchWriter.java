package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Transaction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Plans a write request's transactions: documents are cut into transactions of at most
 * {@link #CHUNK_DOCS} documents and about {@link #CHUNK_BYTES} of KVs, far under FDB's 10 MB
 * and 5 s; a big batch of distinct ids runs as parallel parts, one transaction per core at a
 * time. Each transaction is guarded by a transaction id (RFC D) and applied by
 * {@link DocumentWriter}; each document's outcome is its own.
 */
final class BatchWriter {
    static final long CHUNK_BYTES = 2_000_000;
    static final int CHUNK_DOCS = 1_000;
    /** Parallel parts of one request are at least this big; smaller batches are not worth the hand-off. */
    static final int PARALLEL_MIN_DOCS = 250;
    private static final Executor PARTS = Executors.newVirtualThreadPerTaskExecutor();

    private final Storage storage;
    private volatile int parallelism = Runtime.getRuntime().availableProcessors();

    BatchWriter(Storage storage) {
        this.storage = storage;
    }

    void parallelism(int parts) {
        if (parts < 1) throw new IllegalArgumentException("parallelism must be at least 1");
        this.parallelism = parts;
    }

    /**
     * One id several times: with {@code newEdits}, once an edit of the id succeeded the later
     * ones are conflicts, as in CouchDB on FoundationDB ({@code fabric2_db}); without, a repeated
     * id starts a new transaction, so each merge sees the ones before it. (A transaction cannot
     * read back the winner it wrote: its Sequence is a versionstamped value.)
     */
    List<UpdateResult> update(Database db, List<DocUpdate> given, boolean newEdits, DocumentValidator validator) {
        List<DocUpdate> docs = storage.attachments().storeLargeInline(db, given);
        int parts = Math.min(parallelism, docs.size() / PARALLEL_MIN_DOCS);
        if (parts < 2 || !distinctIds(docs)) return count(updateInOrder(db, docs, newEdits, validator));
        // A big batch of distinct documents is independent transactions anyway (chunks), so its
        // parts run side by side: one request's latency then uses every core, not one. The calling
        // thread writes the last part itself: it is running already, so that part waits for no
        // thread to start or carrier to free up, and no one has to wake the caller for it.
        List<CompletableFuture<List<UpdateResult>>> others = new ArrayList<>(parts - 1);
        for (int p = 0; p < parts - 1; p++) {
            List<DocUpdate> part = part(docs, p, parts);
            others.add(CompletableFuture.supplyAsync(() -> updateInOrder(db, part, newEdits, validator), PARTS));
        }
        List<UpdateResult> last = updateInOrder(db, part(docs, parts - 1, parts), newEdits, validator);
        List<UpdateResult> out = new ArrayList<>(docs.size());
        for (CompletableFuture<List<UpdateResult>> f : others) {
            try {
                out.addAll(f.join());
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                throw e;
            }
        }
        out.addAll(last);
        return count(out);
    }

    /** All documents in one transaction, written only if every one succeeds. */
    List<UpdateResult> updateAllOrNothing(Database db, List<DocUpdate> given, boolean newEdits, DocumentValidator validator) {
        List<DocUpdate> docs = storage.attachments().storeLargeInline(db, given);
        try {
            return count(guarded(db, docs, newEdits, true, Set.of(), new IdentityHashMap<>(), validator));
        } catch (DocumentWriter.AllOrNothingFailed f) {
            return count(f.results);
        }
    }

    private static List<DocUpdate> part(List<DocUpdate> docs, int p, int parts) {
        return docs.subList(docs.size() * p / parts, docs.size() * (p + 1) / parts);
    }

    private static boolean distinctIds(List<DocUpdate> docs) {
        Set<String> ids = HashSet.newHashSet(docs.size());
        for (DocUpdate d : docs) if (!ids.add(d.id())) return false;
        return true;
    }

    private List<UpdateResult> updateInOrder(Database db, List<DocUpdate> docs, boolean newEdits, DocumentValidator validator) {
        List<UpdateResult> out = new ArrayList<>(docs.size());
        Set<String> succeeded = new HashSet<>();
        Map<ObjectNode, Long> sizes = new IdentityHashMap<>(); // JSON sizes, measured once per body
        int i = 0;
        while (i < docs.size()) {
            int j = i;
            long bytes = 0;
            Set<String> ids = new HashSet<>();
            while (j < docs.size() && j - i < CHUNK_DOCS && (newEdits || ids.add(docs.get(j).id()))) {
                long b = storageEstimate(docs.get(j), sizes);
                if (j > i && bytes + b > CHUNK_BYTES) break;
                bytes += b;
                j++;
            }
            List<DocUpdate> chunk = docs.subList(i, j);
            Set<String> before = newEdits ? Set.copyOf(succeeded) : Set.of();
            List<UpdateResult> results = guarded(db, chunk, newEdits, false, before, sizes, validator);
            for (UpdateResult r : results) {
                if (r.ok()) succeeded.add(r.id());
            }
            out.addAll(results);
            i = j;
        }
        return out;
    }

    /** One transaction of documents, guarded by a transaction id; a retry after 1021 answers the first attempt's results. */
    private List<UpdateResult> guarded(Database db, List<DocUpdate> docs, boolean newEdits, boolean atomic, Set<String> succeeded,
                                       Map<ObjectNode, Long> sizes, DocumentValidator validator) {
        int[] attempts = {0};
        DocumentWriter.Context[] last = {null};
        List<UpdateResult> results = db.runGuarded((Transaction tx, DbHandle h) -> {
            if (attempts[0]++ > 0) storage.timer().increment(StorageCounts.WRITE_ATTEMPTS_RETRIED);
            try (DocumentValidator.Checks checks = validator.open(DbReader.of(tx.snapshot(), h, storage.timer()))) {
                DocumentWriter.Context ctx = new DocumentWriter.Context(sizes, checks);
                last[0] = ctx;
                return storage.writer().writeAll(tx, h, docs, newEdits, atomic, succeeded, ctx);
            }
        }, r -> WriteResults.encode(r, newEdits), b -> WriteResults.decode(b, docs, newEdits));
        // The attempt that committed is the last that ran (a retry after 1021 that finds it committed runs none).
        if (last[0] != null) storage.counts.documentInserts.add(last[0].inserts);
        return results;
    }

    /**
     * About the KV bytes a document's write takes, to cut batches well under FDB's 10 MB: RFC A
     * stores one KV per JSON leaf, and every key repeats the revision's prefix, document id
     * included, so many small fields cost several times their JSON size.
     */
    static long storageEstimate(DocUpdate u, Map<ObjectNode, Long> sizes) {
        JsonSize size = JsonSize.of(u.body());
        long perLeaf = u.id().getBytes(StandardCharsets.UTF_8).length + 64; // db, sub, flag, pos, hash, framing
        sizes.put(u.body(), u.body().has("_attachments") ? ExplodedJson.externalSize(DocumentWriter.strip(u.body())) : size.bytes());
        return size.bytes() + size.leaves() * perLeaf;
    }

    private List<UpdateResult> count(List<UpdateResult> results) {
        long written = 0;
        long conflicts = 0;
        for (UpdateResult r : results) {
            if (r.ok()) written++;
            else if (r.error().kind() == StorageException.Kind.CONFLICT) conflicts++;
        }
        storage.timer().add(StorageCounts.DOCUMENTS_WRITTEN, written);
        storage.timer().add(StorageCounts.DOCUMENT_CONFLICTS, conflicts);
        storage.counts.databaseWrites.increment();
        // fabric_doc_update's errors: a document whose update failed (on one node, every copy alike)
        storage.counts.docUpdateErrors.add(results.size() - written);
        return results;
    }
}
