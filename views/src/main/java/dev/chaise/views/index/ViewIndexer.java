package dev.chaise.views.index;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Keys;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.Change;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.Partitions;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewCollation;
import dev.chaise.views.collation.Collation;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.collation.ViewKeyTooLargeException;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;

/**
 * Brings a map index up to date, following RFC E's process flow in batches: one snapshot read of
 * the next changes and their documents, the map functions run outside any transaction, then one
 * write transaction that replaces each document's old rows (found through the id range) and
 * moves the index's update seq. The write transaction reads the update seq without snapshot, so
 * two builders of one index conflict and one of them re-reads; documents changed meanwhile come
 * again later in the changes feed, whose last entry per document is its final state.
 */
public final class ViewIndexer {
    /** RFC E's default of 100 documents per batch is sized for FDB's 5 s; a few hundred stays far below. */
    static final int BATCH_DOCS = 500;
    /** Bytes of document JSON per batch: keeps the map step's memory and the write transaction small. */
    static final long BATCH_BYTES = 4_000_000;
    /** Sum of keys a document may emit into one view, RFC E's 64 KB. */
    static final int DOC_KEYS_LIMIT = 64_000;
    /** RFC E's limit on one emitted value. */
    static final int VALUE_LIMIT = 64_000;

    /** Called after each committed batch. */
    public interface Progress {
        void batch(int docs, Sequence reached);
    }

    /**
     * Rows changed per write transaction: a batch whose documents emit more is written in parts,
     * so tree upkeep (at worst a recomputed entry of up to 64 rows per changed row) stays well
     * inside 5 s; a part that still exceeds 10 MB is halved.
     */
    static final int ROWS_PER_TRANSACTION = 5_000;

    private final int segmentDocs;
    private final Reductions reductions;
    private final ReduceTree.Order order;

    /** @param segmentDocs changes per segment of a parallel build */
    public ViewIndexer(int segmentDocs) {
        this(segmentDocs, Reductions.COUNTS, ReduceTree.Order.DEFAULT);
    }

    /**
     * @param reductions each view's reduce function, for its tree
     * @param order the fan-out of trees this indexer builds
     */
    public ViewIndexer(int segmentDocs, Reductions reductions, ReduceTree.Order order) {
        this.segmentDocs = segmentDocs;
        this.reductions = reductions;
        this.order = order;
    }

    /** One change with the document the map functions see (null when it is deleted or skipped). */
    private record Pending(Change change, ObjectNode doc) {}

    /** @param purgeSeq the database's purge_seq when the batch was read: a purge since makes its rows stale */
    private record Batch(Sequence from, List<Pending> docs, Sequence last, Sequence purgeSeq) {}

    /**
     * Builds a large gap with several workers: the changes up to {@code target} are cut into
     * segments of about {@link #SEGMENT_DOCS} changes (by default), each indexed by whichever worker is free
     * (each with its own map program, since programs are thread-confined), then the update seq
     * moves to {@code target} once, and the usual batches take it from there. Documents are
     * distinct across segments (one changes row per document), and rows are replaced through the
     * id range, so segments never overlap; a document changed meanwhile has moved past
     * {@code target} and is indexed again after. The segments are cut by this thread while the
     * workers index the first ones: cutting them all first kept a core idle for the scan.
     *
     * @return false if another builder moved the index meanwhile (the caller goes on with {@link #update})
     */
    public boolean buildParallel(Database db, DesignDoc ddoc, java.util.function.Supplier<MapProgram> programs, Sequence target,
                                 int workers, Progress progress) {
        Sequence from = updateSeq(db, ddoc.signature());
        Segments segments = new Segments(db, from, target);
        if (!segments.several()) return true; // one segment: the plain loop is as fast
        // A first build starts from an empty index (clearing what an interrupted attempt left), so
        // its writes need not read each document's old rows.
        boolean fresh = from == null;
        if (fresh) {
            db.subspaces().run((tx, h) -> {
                MapIndexSubspace.clearData(tx, h, ddoc.signature()); // after a 1021, clearing again is harmless
                return null;
            });
        }
        var pool = java.util.concurrent.Executors.newFixedThreadPool(Math.max(1, workers), Thread.ofPlatform().name("view-build-", 0).daemon().factory());
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                done.add(pool.submit(() -> {
                    try (MapProgram program = programs.get()) {
                        Sequence[] segment;
                        while ((segment = segments.take()) != null) {
                            Sequence start = segment[0];
                            Sequence end = segment[1];
                            while (start == null || start.compareTo(end) < 0) {
                                Batch b = readBatch(db, ddoc, start, end);
                                if (b.docs.isEmpty()) break;
                                List<List<MapOutcome>> outcomes = mapAll(program, b.docs);
                                Sequence reached = writeInParts(db, ddoc, b, outcomes, false, false, fresh);
                                // A purge since the batch was read stops it: read the rest again.
                                if (java.util.Objects.equals(reached, b.last) && progress != null) progress.batch(b.docs.size(), b.last);
                                start = reached;
                            }
                        }
                    }
                    return null;
                }));
            }
            try {
                segments.cutTheRest(workers);
            } catch (RuntimeException e) {
                segments.close(workers);
                throw e;
            }
            for (var f : done) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException r) throw r;
                    throw new IllegalStateException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        String sig = ddoc.signature();
        // The merge: every view's reduce tree, bulk-loaded from the rows the segments wrote, becomes
        // current in the commit that moves the update seq. That commit happens only if nobody moved
        // the seq meanwhile: a conflicting read, so a 1021 is retried, and finds it moved.
        ReduceTree.Meta[] trees = loadTrees(db, ddoc);
        return db.subspaces().runGuarded((tx, h) -> {
            if (!java.util.Objects.equals(MapIndexSubspace.updateSeq(tx, h, sig), from)) return false;
            MapIndexSubspace.setUpdateSeq(tx, h, sig, target);
            setTrees(tx, h, ddoc, trees);
            return true;
        }, moved -> new byte[] {(byte) (moved ? 1 : 0)}, bytes -> bytes[0] == 1);
    }

    /**
     * The segments of (from, target], cut as the changes' keys are read (in snapshot transactions
     * of a bounded size) and handed to the workers as they come: {@code (from, s1]}, {@code (s1, s2]},
     * ..., {@code (sn, target]}.
     */
    private final class Segments {
        /** No more segments: one per worker. */
        private static final Sequence[] END = new Sequence[0];
        private final Cursor<Sequence> changes;
        private final Sequence target;
        private final java.util.concurrent.BlockingQueue<Sequence[]> queue = new java.util.concurrent.LinkedBlockingQueue<>();
        private final boolean several;
        private Sequence cut;
        private boolean ended;

        /** Cuts the first two segments, which tell whether there are several. */
        Segments(Database db, Sequence from, Sequence target) {
            // A transaction per segment, so the first is cut without reading far ahead.
            this.changes = changesThrough(db, from, target, segmentDocs);
            this.target = target;
            this.cut = from;
            Sequence[] a = cutNext();
            Sequence[] b = a == null ? null : cutNext();
            this.several = b != null;
            if (a != null) queue.add(a);
            if (b != null) queue.add(b);
        }

        boolean several() {
            return several;
        }

        /** The next segment, or null when all are cut. */
        private Sequence[] cutNext() {
            if (ended) return null;
            long n = 0;
            while (changes.hasNext()) {
                Sequence s = changes.next();
                if (++n % segmentDocs == 0) {
                    Sequence[] segment = {cut, s};
                    cut = s;
                    return segment;
                }
            }
            ended = true;
            return target.equals(cut) ? null : new Sequence[] {cut, target};
        }

        /** Cuts the remaining segments for the workers, then tells each of them there are no more. */
        void cutTheRest(int workers) {
            for (Sequence[] s; (s = cutNext()) != null; ) queue.add(s);
            close(workers);
        }

        void close(int workers) {
            for (int w = 0; w < workers; w++) queue.add(END);
        }

        /** The next segment, waiting for it to be cut; null when there are no more. */
        Sequence[] take() throws InterruptedException {
            Sequence[] s = queue.take();
            return s == END ? null : s;
        }
    }

    /** A view's tree, with its reducer (null for counts only). */
    static ReduceTree tree(DbHandle db, DesignDoc ddoc, int viewId, Reductions.Opened reducers) {
        return new ReduceTree(db, ddoc.signature(), viewId, reducers == null ? null : reducers.of(viewId));
    }

    /**
     * Bulk-loads the tree of every view that has none (null entries: views that have one, or need
     * none), from the rows as they are; the caller makes them current with {@link #setTrees} in a
     * transaction that checks the index did not move meanwhile.
     */
    private ReduceTree.Meta[] loadTrees(Database db, DesignDoc ddoc) {
        int views = ddoc.views().size();
        ReduceTree.Meta[] out = new ReduceTree.Meta[views];
        if (!ddoc.reduceTrees()) return out;
        try (Reductions.Opened reducers = reductions.open(ddoc)) {
            for (int v = 0; v < views; v++) {
                int viewId = v;
                if (db.read(r -> tree(r.handle(), ddoc, viewId, null).meta(r.tx()) != null)) continue;
                ReduceTree.Transactions txs = new ReduceTree.Transactions() {
                    @Override
                    public <T> T run(java.util.function.Function<Transaction, T> body) {
                        return db.subspaces().run((tx, h) -> body.apply(tx));
                    }
                };
                out[v] = tree(db.handle(), ddoc, viewId, reducers).bulkLoad(txs, order);
            }
        }
        return out;
    }

    /** Whether a view of the index lacks its tree (being built, or a build was cut short before loading it). */
    public boolean treesMissing(Database db, DesignDoc ddoc) {
        if (!ddoc.reduceTrees()) return false;
        return db.read(r -> {
            for (int v = 0; v < ddoc.views().size(); v++) {
                if (tree(r.handle(), ddoc, v, null).meta(r.tx()) == null) return true;
            }
            return false;
        });
    }

    private static void setTrees(Transaction tx, DbHandle h, DesignDoc ddoc, ReduceTree.Meta[] trees) {
        for (int v = 0; v < trees.length; v++) {
            if (trees[v] != null) tree(h, ddoc, v, null).setMeta(tx, trees[v]);
        }
    }

    /**
     * After a build that had no trees (a first build in batches, or one cut short): loads them and
     * makes them current if the index is still at {@code reached}; otherwise the next build tries again.
     */
    public void ensureTrees(Database db, DesignDoc ddoc, Sequence reached) {
        ReduceTree.Meta[] trees = loadTrees(db, ddoc);
        if (java.util.Arrays.stream(trees).allMatch(java.util.Objects::isNull)) return;
        String sig = ddoc.signature();
        db.subspaces().run((tx, h) -> {
            if (!java.util.Objects.equals(MapIndexSubspace.updateSeq(tx, h, sig), reached)) return null;
            setTrees(tx, h, ddoc, trees); // setting them twice after a 1021 is harmless
            return null;
        });
    }

    private static Sequence updateSeq(Database db, String sig) {
        return db.read(r -> MapIndexSubspace.updateSeq(r.tx(), r.handle(), sig));
    }

    /** Changes in (from, target], a sequence each, across as many transactions as it takes. */
    private static Cursor<Sequence> changesThrough(Database db, Sequence from, Sequence target, int rowsPerTransaction) {
        return db.changes(from, target, ScanProperties.FORWARD.rowsPerTransaction(rowsPerTransaction), (r, c) -> c.seq());
    }

    /** Rows per transaction when only the changes' keys are read. */
    private static final int SCAN_ROWS = 50_000;

    /** How many changes lie in (from, target]: {@code total_changes} for {@code _active_tasks}. */
    public long countChanges(Database db, Sequence from, Sequence target) {
        long total = 0;
        for (Cursor<Sequence> c = changesThrough(db, from, target, SCAN_ROWS); c.hasNext(); c.next()) total++;
        return total;
    }

    /** How many changes one segment of a parallel build covers. */
    public static final int SEGMENT_DOCS = 5_000;

    /**
     * Indexes changes until the index has reached {@code target} (or the end of the feed, for
     * null), in as many batches as it takes.
     *
     * @return the update seq the index reached
     */
    public Sequence update(Database db, DesignDoc ddoc, MapProgram program, Sequence target, Progress progress) {
        return update(db, ddoc, program, target, false, progress);
    }

    /**
     * @param bounded stop at {@code target} exactly: an interactive index's background build up to
     *     its creation versionstamp, past which documents index themselves; such a build also skips
     *     documents written since its snapshot
     */
    public Sequence update(Database db, DesignDoc ddoc, MapProgram program, Sequence target, boolean bounded, Progress progress) {
        Sequence reached = updateLoop(db, ddoc, program, target, bounded, progress);
        // An interactive index's tree is made with it and kept by every write; the others' first build loads theirs now.
        if (!bounded && reached != null) ensureTrees(db, ddoc, reached);
        return reached;
    }

    private Sequence updateLoop(Database db, DesignDoc ddoc, MapProgram program, Sequence target, boolean bounded, Progress progress) {
        while (true) {
            Batch b = readBatch(db, ddoc, updateSeq(db, ddoc.signature()), bounded ? target : null);
            if (b.docs.isEmpty()) return b.from;
            List<List<MapOutcome>> outcomes = mapAll(program, b.docs);
            // Stopped short: another builder got there first, or a purge came between; read again from where the index is.
            if (!java.util.Objects.equals(writeInParts(db, ddoc, b, outcomes, true, bounded, false), b.last)) continue;
            if (progress != null) progress.batch(b.docs.size(), b.last);
            if (target != null && b.last.compareTo(target) >= 0) return b.last;
        }
    }

    /**
     * Writes a batch in as many transactions as its rows need ({@link #ROWS_PER_TRANSACTION}
     * each); with {@code moveSeq}, each part moves the update seq to its last change.
     *
     * @return the last change written: short of the batch's last if a part was refused (another
     *     builder moved the index first, or the database was purged since the batch was read)
     */
    private Sequence writeInParts(Database db, DesignDoc ddoc, Batch b, List<List<MapOutcome>> outcomes, boolean moveSeq,
                                  boolean verifyCurrent, boolean fresh) {
        int start = 0;
        long rows = 0;
        Sequence from = b.from;
        for (int i = 0; i < b.docs.size(); i++) {
            List<MapOutcome> o = outcomes.get(i);
            if (o != null) for (MapOutcome m : o) if (m instanceof MapOutcome.Rows r) rows += r.rows().size();
            boolean last = i == b.docs.size() - 1;
            if (!last && rows < ROWS_PER_TRANSACTION) continue;
            Batch part = start == 0 && last ? b : new Batch(from, b.docs.subList(start, i + 1), b.docs.get(i).change().seq(), b.purgeSeq);
            Sequence reached = writeHalving(db, ddoc, part, outcomes.subList(start, i + 1), moveSeq, verifyCurrent, fresh);
            if (!java.util.Objects.equals(reached, part.last)) return reached;
            from = part.last;
            start = i + 1;
            rows = 0;
        }
        return from;
    }

    /** The batch's documents through the map functions in one call; null where a change has no document to map. */
    private static List<List<MapOutcome>> mapAll(MapProgram program, List<Pending> docs) {
        List<ObjectNode> present = new ArrayList<>(docs.size());
        for (Pending p : docs) if (p.doc != null) present.add(p.doc);
        List<List<MapOutcome>> mapped = present.isEmpty() ? List.of() : program.mapAllDocs(present);
        List<List<MapOutcome>> out = new ArrayList<>(docs.size());
        int i = 0;
        for (Pending p : docs) out.add(p.doc == null ? null : mapped.get(i++));
        return out;
    }

    /**
     * The next batch of changes after {@code from} and at most {@code end} (null: to the end of the
     * feed), with their documents, in one snapshot transaction: up to {@link #BATCH_DOCS} changes
     * or {@link #BATCH_BYTES} read. The documents are read a run of changes at a time
     * ({@link DbReader#changed}: one iterator sought through the bodies, where a read per document
     * paid for an iterator, its seek and the revision record every time).
     */
    private static Batch readBatch(Database db, DesignDoc ddoc, Sequence from, Sequence end) {
        ScanProperties props = ScanProperties.FORWARD.rowsPerTransaction(BATCH_DOCS).bytesPerTransaction(BATCH_BYTES).oneTransaction();
        BatchReader reader = new BatchReader(ddoc);
        Cursor<Pending> c = db.changes(from, end, props, reader);
        List<Pending> docs = new ArrayList<>();
        c.forEachRemaining(docs::add);
        return new Batch(from, docs, docs.isEmpty() ? from : docs.getLast().change().seq(), reader.purgeSeq);
    }

    /** Bytes of documents one read-ahead aims at: a run of small documents is one read; a large one comes alone. */
    static final long READ_AHEAD_BYTES = 256_000;
    /** The most changes one read-ahead takes. */
    static final int READ_AHEAD_DOCS = 128;

    /** A batch's changes with their documents, read ahead a run at a time in the batch's transaction. */
    private static final class BatchReader implements Database.Prefetching<Change, Pending> {
        private final DesignDoc ddoc;
        private final Map<Change, ObjectNode> ahead = new java.util.HashMap<>();
        private Sequence purgeSeq;
        private boolean purgeRead;
        /** Bytes per document in the last read-ahead, to size the next; a guess before the first. */
        private long docBytes = 2_000;

        BatchReader(DesignDoc ddoc) {
            this.ddoc = ddoc;
        }

        private boolean mapped(Change change) {
            return !change.deleted() && (ddoc.includeDesign() || !change.id().startsWith(DocumentJson.DESIGN_PREFIX));
        }

        @Override
        public int prefetchSize() {
            return (int) Math.max(1, Math.min(READ_AHEAD_DOCS, READ_AHEAD_BYTES / Math.max(1, docBytes)));
        }

        @Override
        public void prefetch(DbReader r, List<Change> rows) {
            ahead.clear();
            List<Change> wanted = new ArrayList<>(rows.size());
            for (Change c : rows) if (mapped(c)) wanted.add(c);
            if (wanted.isEmpty()) return;
            long before = r.bytesRead();
            List<ObjectNode> read = read(r, wanted);
            docBytes = Math.max(1, (r.bytesRead() - before) / wanted.size());
            for (int i = 0; i < wanted.size(); i++) ahead.put(wanted.get(i), read.get(i));
        }

        private List<ObjectNode> read(DbReader r, List<Change> changes) {
            List<ObjectNode> out = new ArrayList<>(changes.size());
            List<StoredDoc> read = r.changed(changes);
            for (int i = 0; i < changes.size(); i++) {
                ObjectNode doc = mapDoc(read.get(i));
                if (ddoc.localSeq()) doc.put("_local_seq", changes.get(i).seq().toHex());
                out.add(doc);
            }
            return out;
        }

        @Override
        public Pending map(DbReader r, Change change) {
            if (!purgeRead) { // in the batch's own snapshot
                purgeSeq = r.purgeSeq();
                purgeRead = true;
            }
            if (!mapped(change)) return new Pending(change, null);
            ObjectNode doc = ahead.get(change);
            return new Pending(change, doc != null ? doc : read(r, List.of(change)).getFirst());
        }
    }

    /**
     * Writes a batch, in halves (and so on) while its transaction would exceed FDB's 10 MB.
     *
     * @return the last change written, as {@link #writeInParts} gives it
     */
    private Sequence writeHalving(Database db, DesignDoc ddoc, Batch b, List<List<MapOutcome>> outcomes, boolean moveSeq,
                                  boolean verifyCurrent, boolean fresh) {
        try {
            return write(db, ddoc, b, outcomes, moveSeq, verifyCurrent, fresh) ? b.last : b.from;
        } catch (dev.chaise.kv.KvException e) {
            if (e.code() != dev.chaise.kv.KvException.TRANSACTION_TOO_LARGE || b.docs.size() < 2) throw e;
            int half = b.docs.size() / 2;
            Batch first = new Batch(b.from, b.docs.subList(0, half), b.docs.get(half - 1).change().seq(), b.purgeSeq);
            Batch second = new Batch(first.last, b.docs.subList(half, b.docs.size()), b.last, b.purgeSeq);
            Sequence reached = writeHalving(db, ddoc, first, outcomes.subList(0, half), moveSeq, verifyCurrent, fresh);
            if (!java.util.Objects.equals(reached, first.last)) return reached;
            return writeHalving(db, ddoc, second, outcomes.subList(half, outcomes.size()), moveSeq, verifyCurrent, fresh);
        }
    }

    /**
     * Writes one batch, unless the database was purged since the batch was read, or (with
     * {@code moveSeq}) the index has moved (false, either way); with {@code moveSeq} the index's
     * update seq moves to the batch's last change. Views whose tree is current get it updated in
     * the same transaction.
     */
    private boolean write(Database database, DesignDoc ddoc, Batch b, List<List<MapOutcome>> outcomes, boolean moveSeq,
                          boolean verifyCurrent, boolean fresh) {
        String sig = ddoc.signature();
        List<Emitted[]> rows = new ArrayList<>(b.docs.size());
        for (int i = 0; i < b.docs.size(); i++) rows.add(encode(outcomes.get(i), ddoc.views()));
        try (Reductions.Opened reducers = reductions.open(ddoc)) {
            // Guarded by a transaction id: a batch's counters are atomic adds, so after a 1021 the retry
            // must learn whether the first attempt committed rather than add them twice.
            return database.subspaces().runGuarded((tx, db) -> {
                if (moveSeq && !java.util.Objects.equals(MapIndexSubspace.updateSeq(tx, db, sig), b.from)) return false;
                DbReader current = database.subspaces().reader(tx, db);
                // A purge since the batch was read has removed what these rows would put back; the read makes a later one conflict.
                if (!java.util.Objects.equals(current.purgeSeq(), b.purgeSeq())) return false;
                MapIndexSubspace.Deltas deltas = new MapIndexSubspace.Deltas(ddoc.views().size());
                TreeChanges trees = fresh || !ddoc.reduceTrees() ? null : TreeChanges.read(tx, db, ddoc);
                for (int i = 0; i < b.docs.size(); i++) {
                    Change c = b.docs.get(i).change;
                    // Interactive indexes: a document written since the snapshot was indexed by its own
                    // transaction; these rows would be stale. The read makes a later write conflict.
                    if (verifyCurrent && !c.seq().equals(current.winnerSequence(c.id()))) continue;
                    indexDoc(tx, db, ddoc, c.id(), c.rev().toString(), rows.get(i), deltas, fresh, trees);
                }
                if (trees != null) trees.apply(tx, db, ddoc, reducers);
                deltas.flush(tx, db, sig);
                if (moveSeq) MapIndexSubspace.setUpdateSeq(tx, db, sig, b.last);
                return true;
            }, moved -> new byte[] {(byte) (moved ? 1 : 0)}, bytes -> bytes[0] == 1);
        }
    }

    /**
     * The rows one transaction puts into and takes out of each view whose tree is current (views
     * without one, being built, are skipped: their tree is loaded from the rows when the build ends).
     */
    static final class TreeChanges {
        private final ReduceTree.Meta[] metas;
        private final List<List<TreeReducer.Row>> inserted = new ArrayList<>();
        private final List<List<TreeReducer.Row>> removed = new ArrayList<>();

        private TreeChanges(ReduceTree.Meta[] metas) {
            this.metas = metas;
            for (int v = 0; v < metas.length; v++) {
                inserted.add(new ArrayList<>());
                removed.add(new ArrayList<>());
            }
        }

        static TreeChanges read(Transaction tx, DbHandle db, DesignDoc ddoc) {
            ReduceTree.Meta[] metas = new ReduceTree.Meta[ddoc.views().size()];
            for (int v = 0; v < metas.length; v++) metas[v] = tree(db, ddoc, v, null).meta(tx);
            return new TreeChanges(metas);
        }

        List<TreeReducer.Row> removedOf(int viewId) {
            return metas[viewId] == null ? null : removed.get(viewId);
        }

        List<TreeReducer.Row> insertedOf(int viewId) {
            return metas[viewId] == null ? null : inserted.get(viewId);
        }

        void apply(Transaction tx, DbHandle db, DesignDoc ddoc, Reductions.Opened reducers) {
            for (int v = 0; v < metas.length; v++) {
                if (metas[v] == null || (inserted.get(v).isEmpty() && removed.get(v).isEmpty())) continue;
                tree(db, ddoc, v, reducers).apply(tx, metas[v], inserted.get(v), removed.get(v));
            }
        }
    }

    /**
     * Replaces one document's rows in every view of an index, inside the caller's transaction (the
     * interactive path: RFC E's steps 5 to 10 for one document).
     *
     * @param outcomes the map results per view, or null to remove the document (deleted)
     */
    public static void indexDoc(Transaction tx, DbHandle db, DesignDoc ddoc, String docId, String rev, List<MapOutcome> outcomes,
                                Reductions.Opened reducers) {
        indexDoc(tx, db, ddoc, docId, rev, outcomes, false, reducers);
    }

    /**
     * @param newDoc the document never existed before this write: it has no rows or errors to clear, so none are read
     * @param reducers the views' reduce functions, for their trees
     */
    public static void indexDoc(Transaction tx, DbHandle db, DesignDoc ddoc, String docId, String rev, List<MapOutcome> outcomes, boolean newDoc,
                                Reductions.Opened reducers) {
        MapIndexSubspace.Deltas deltas = new MapIndexSubspace.Deltas(ddoc.views().size());
        TreeChanges trees = ddoc.reduceTrees() ? TreeChanges.read(tx, db, ddoc) : null;
        indexDoc(tx, db, ddoc, docId, rev, encode(outcomes, ddoc.views()), deltas, newDoc, trees);
        if (trees != null) trees.apply(tx, db, ddoc, reducers);
        deltas.flush(tx, db, ddoc.signature());
    }

    /**
     * A document as map functions see it: with {@code _conflicts} when it has any, as in CouchDB
     * (whose guide finds conflicts with a view on {@code doc._conflicts}).
     *
     * @param d read with its branches, or without them when it has only one
     */
    static ObjectNode mapDoc(StoredDoc d) {
        return DocumentJson.renderWithConflicts(d);
    }

    /**
     * @param fresh the index was emptied for this build: no document has rows or errors to clear yet
     * @param trees where the rows changed go, for views whose tree is current; null when none is
     */
    private static void indexDoc(Transaction tx, DbHandle db, DesignDoc ddoc, String docId, String rev, Emitted[] now,
                                 MapIndexSubspace.Deltas deltas, boolean fresh, TreeChanges trees) {
        String sig = ddoc.signature();
        int views = ddoc.views().size();
        // the sort keys' partition prefix: empty for a view that is not partitioned, null for a document without a partition
        byte[] partition = new byte[0];
        if (ddoc.partitioned(db.partitioned())) {
            String p = Partitions.of(docId);
            partition = p == null ? null : PartitionedKeys.prefix(p);
        }
        MapIndexSubspace.DocKeys[] old = fresh ? new MapIndexSubspace.DocKeys[views] : MapIndexSubspace.docKeys(tx, db, sig, docId, views);
        for (int v = 0; v < views; v++) {
            List<TreeReducer.Row> inserted = trees == null ? null : trees.insertedOf(v);
            if (old[v] != null) MapIndexSubspace.removeDoc(tx, db, sig, docId, v, old[v], trees == null ? null : trees.removedOf(v), deltas);
            Emitted e = now == null ? null : now[v];
            if (!fresh) MapIndexSubspace.clearError(tx, db, sig, v, docId);
            if (e == null) continue;
            if (e.error != null) {
                MapIndexSubspace.setError(tx, db, sig, v, docId, rev, e.error, e.reason);
                continue;
            }
            if (e.rows.isEmpty() || partition == null) continue; // a document without a partition has no rows in a partitioned view
            Map<ByteBuffer, Long> dupes = new LinkedHashMap<>();
            long size = 0;
            byte[] prefix = MapIndexSubspace.rowPrefix(db, sig, v);
            for (EncodedRow r : e.rows) {
                byte[] sortKey = partition.length == 0 ? r.sortKey : Keys.concat(partition, r.sortKey);
                long dupe = dupes.merge(ByteBuffer.wrap(sortKey), 1L, Long::sum) - 1;
                byte[] suffix = new TupleBytes(sortKey.length + docId.length() + 16).addBytes(sortKey).add(docId).add(dupe).toArray();
                MapIndexSubspace.putRow(tx, prefix, suffix, r.keyJson, r.valueJson);
                size += r.keyJson.length() + r.valueJson.length();
                if (inserted != null) inserted.add(new TreeReducer.Row(suffix, r.keyJson, docId, r.valueJson));
            }
            List<byte[]> unique = dupes.keySet().stream().map(ByteBuffer::array).toList();
            MapIndexSubspace.setDocKeys(tx, db, sig, docId, v, new MapIndexSubspace.DocKeys(e.rows.size(), size, unique));
            deltas.count(v, e.rows.size(), size);
        }
    }

    /** {@code value} is only for ordering one document's rows under the same key. */
    private record EncodedRow(byte[] sortKey, String keyJson, String valueJson, JsonNode value) {}

    /** CouchDB returns one document's rows for an equal key in value order, not emit order. */
    private static final Comparator<EncodedRow> ROW_ORDER = (a, b) -> {
        int c = Arrays.compareUnsigned(a.sortKey, b.sortKey);
        return c != 0 ? c : ViewCollation.compare(a.value, b.value);
    };

    /** One view's outcome for one doc: rows, or the error that skips the doc for that view. */
    private record Emitted(List<EncodedRow> rows, String error, String reason) {}

    /** Encodes and checks every emitted row outside the transaction; null for a doc with no map run. */
    private static Emitted[] encode(List<MapOutcome> outcomes, List<DesignDoc.View> views) {
        if (outcomes == null) return null;
        Emitted[] out = new Emitted[views.size()];
        for (int v = 0; v < out.length; v++) {
            MapOutcome o = outcomes.get(v);
            out[v] = switch (o) {
                // As couchjs timing out fails CouchDB's index update: the query that waits for it answers 500.
                case MapOutcome.Failed f when JsEngine.stoppedByEngine(f.error()) -> throw ViewException.engineStopped(f.error(), f.reason());
                case MapOutcome.Failed f -> new Emitted(List.of(), f.error(), f.reason());
                case MapOutcome.Rows r -> encodeRows(r.rows(), views.get(v).collation());
            };
        }
        return out;
    }

    private static Emitted encodeRows(List<MapOutcome.Emit> emits, Collation collation) {
        List<EncodedRow> rows = new ArrayList<>(emits.size());
        long keyBytes = 0;
        for (MapOutcome.Emit e : emits) {
            try {
                byte[] sortKey = collation.encodeChecked(e.key());
                String k = Json.write(e.key());
                String v = Json.write(e.value());
                keyBytes += k.length();
                if (v.length() > VALUE_LIMIT) {
                    return new Emitted(List.of(), "value_too_large", "emitted value is " + v.length() + " bytes, over the limit of " + VALUE_LIMIT);
                }
                if (keyBytes > DOC_KEYS_LIMIT) {
                    return new Emitted(List.of(), "keys_too_large", "emitted keys add up to over " + DOC_KEYS_LIMIT + " bytes");
                }
                rows.add(new EncodedRow(sortKey, k, v, e.value() == null ? NullNode.getInstance() : e.value()));
            } catch (ViewKeyTooLargeException x) {
                return new Emitted(List.of(), "key_too_large", x.getMessage());
            }
        }
        if (rows.size() > 1) rows.sort(ROW_ORDER);
        return new Emitted(rows, null, null);
    }

}
