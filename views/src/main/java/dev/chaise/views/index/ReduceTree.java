package dev.chaise.views.index;

import static dev.chaise.storage.KeySpace.Db.VIEWS;
import static dev.chaise.storage.KeySpace.ReduceTree.TREE_META;
import static dev.chaise.storage.KeySpace.ViewData.REDUCE_TREE;
import static dev.chaise.storage.KeySpace.Views.DATA;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.DatabaseSubspace;
import dev.chaise.storage.DbHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One view's reduce tree: a B+tree over the view's map rows whose inner nodes keep partial
 * reductions, so that a reduction over any key range reads O(log n) entries (CouchDB's b-tree;
 * on FoundationDB, CouchDB's ebtree). The leaves are the map rows themselves, which stay where
 * RFC E puts them ({@link MapIndexSubspace}'s map range); the tree adds levels above them.
 *
 * <pre>
 * (1, DbId, 7 VIEWS, 1 DATA, Sig, 4 REDUCE_TREE, ViewId)
 * ├── 0 TREE_META = (Format, Height, Max, Min, Fill)           absent while the tree is being built
 * ├── 1, [SortKey, DocId, DupeId] = Entry                      level 1: each entry covers map rows
 * ├── 2, [SortKey, DocId, DupeId] = Entry                      level 2: each covers level-1 entries
 * └── ... up to Height
 *
 * Entry = Rows (int64 BE), Children (int32 BE), State (1 byte: 0 none, 1 reduction, 2 omitted), Reduction bytes
 * </pre>
 *
 * An entry at level L is keyed by its <em>boundary</em>: the first position it covers, written as
 * a map row's key after the view's map-range prefix (sort key, doc id, dupe id); the leftmost
 * entry of every level has the empty boundary, which sorts before every row. An entry covers
 * everything from its boundary up to the next boundary of its level. A node of the B+tree is thus
 * a run of entries at level L-1 (or of rows), and its reduction lives in the entry of level L
 * above it: one KV per node summary, so an update rewrites one small value per level and a query
 * reads ranges of them. A boundary need not be a row that still exists: it is only a split point.
 *
 * <p><b>Invariants</b> (checked by {@link #check} in tests):
 * <ol>
 *   <li>Every level 1..Height has the empty boundary; each level's boundaries are a subset of the
 *       level below's (so a node never straddles its parent's boundary), and all rows sit at the
 *       same depth: the tree is balanced by construction.
 *   <li>An entry's Children is the number of entries (rows, at level 1) it covers one level down,
 *       and lies in [Min, Max], except for the only entry of the top level.
 *   <li>The top level has at most Max entries, and at least two if Height &gt; 1.
 *   <li>An entry's Rows is the number of map rows it covers, and its Reduction is the rereduce of
 *       its children's (the reduce of its rows, at level 1), in index order. An entry with no rows
 *       stores none (state 0); a reduction that would exceed {@link #REDUCTION_LIMIT} bytes, or
 *       whose children include an omitted one, is omitted (state 2) and readers descend below it,
 *       so every value stays well under FoundationDB's 100 KB.
 * </ol>
 *
 * <p><b>Updates</b> ({@link #apply}) run in the transaction that changes the rows, bottom-up: the
 * entries containing changed rows take the change as a delta (a merge of the inserted rows'
 * reduction, a {@link TreeReducer#subtract} of the removed ones) or are recomputed from their
 * children when the reducer cannot subtract; then over-full entries split (new boundaries inside
 * them, at child boundaries) and under-full ones merge with a neighbour (a boundary removed, from
 * every level that has it); the deltas and child counts go to the parents; the top level grows or
 * shrinks. Every read goes through the transaction, so concurrent writers of the same entries
 * conflict and retry. {@link #bulkLoad} builds a tree bottom-up from rows already written, in
 * transactions of bounded size, for an index's first build. Bulk loads and splits cut nodes where
 * keys change most ({@link #cut}), so groups and key ranges line up with whole entries.
 */
public final class ReduceTree {
    /** Children per entry: at most {@code max}, at least {@code min}; bulk loads and splits aim at {@code fill}. */
    public record Order(int max, int min, int fill) {
        public static final Order DEFAULT = new Order(64, 16, 48);

        public Order {
            if (min < 1 || fill > max || 2 * min > fill || fill + min - 1 > max) {
                throw new IllegalArgumentException("tree order needs 1 <= min <= fill/2 and fill + min - 1 <= max: " + max + "/" + min + "/" + fill);
            }
        }
    }

    /** A tree's shape, from its meta key. */
    public record Meta(int height, Order order) {}

    /** The largest reduction an entry stores; larger ones are omitted and computed from below. */
    static final int REDUCTION_LIMIT = 32_000;
    private static final int FORMAT = 1;
    private static final byte NONE = 0;
    private static final byte PRESENT = 1;
    private static final byte OMITTED = 2;
    private static final byte[] EMPTY = new byte[0];
    private static final Comparator<byte[]> BYTES = Arrays::compareUnsigned;

    private final DbHandle db;
    private final String sig;
    private final int viewId;
    private final TreeReducer<Object> reducer;
    private final byte[] rowPrefix;
    private final byte[] rowEnd;
    private final List<byte[]> levels = new ArrayList<>();

    /** @param reducer null for a map-only view: the tree keeps row counts only */
    @SuppressWarnings("unchecked")
    public ReduceTree(DbHandle db, String sig, int viewId, TreeReducer<?> reducer) {
        this.db = db;
        this.sig = sig;
        this.viewId = viewId;
        this.reducer = (TreeReducer<Object>) reducer;
        this.rowPrefix = MapIndexSubspace.rowPrefix(db, sig, viewId);
        this.rowEnd = DatabaseSubspace.subtreeEnd(rowPrefix);
    }

    public TreeReducer<Object> reducer() {
        return reducer;
    }

    // ---------------------------------------------------------------- keys and values

    private byte[] level(int l) {
        while (levels.size() <= l) levels.add(db.space().pack(VIEWS, DATA, sig, REDUCE_TREE, (long) viewId, (long) levels.size()));
        return levels.get(l);
    }

    private byte[] key(int l, byte[] boundary) {
        return Keys.concat(level(l), boundary);
    }

    private byte[] levelEnd(int l) {
        return DatabaseSubspace.subtreeEnd(level(l));
    }

    private byte[] metaKey() {
        return db.space().pack(VIEWS, DATA, sig, REDUCE_TREE, (long) viewId, TREE_META);
    }

    /** The tree's whole key range. */
    private byte[][] range() {
        return db.space().range(VIEWS, DATA, sig, REDUCE_TREE, (long) viewId);
    }

    /** A position in the view: a row's key after the map-range prefix. */
    public byte[] suffix(byte[] rowKey) {
        return Arrays.copyOfRange(rowKey, rowPrefix.length, rowKey.length);
    }

    /** One stored entry; {@code reduction} is the encoded partial (null when there is none). */
    record Entry(byte[] boundary, long rows, long children, byte[] reduction, boolean omitted) {
        boolean empty() {
            return rows == 0;
        }
    }

    private static byte[] encode(Entry e) {
        byte[] r = e.reduction == null ? EMPTY : e.reduction;
        return ByteBuffer.allocate(13 + r.length).putLong(e.rows).putInt((int) e.children)
                .put(e.omitted ? OMITTED : e.reduction == null ? NONE : PRESENT).put(r).array();
    }

    private Entry decode(int l, KeyValue kv) {
        byte[] boundary = Arrays.copyOfRange(kv.key(), level(l).length, kv.key().length);
        return decode(boundary, kv.value());
    }

    private static Entry decode(byte[] boundary, byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v);
        long rows = b.getLong();
        long children = b.getInt();
        byte state = b.get();
        byte[] red = state == PRESENT ? Arrays.copyOfRange(v, 13, v.length) : null;
        return new Entry(boundary, rows, children, red, state == OMITTED);
    }

    // ---------------------------------------------------------------- meta

    /** The tree's shape, or null while it is being built (queries then reduce from rows). */
    public Meta meta(ReadTransaction tx) {
        byte[] v = tx.get(metaKey());
        if (v == null) return null;
        Tuple t = Tuple.fromBytes(v);
        return new Meta((int) t.getLong(1), new Order((int) t.getLong(2), (int) t.getLong(3), (int) t.getLong(4)));
    }

    public void setMeta(Transaction tx, Meta m) {
        tx.set(metaKey(), Tuple.from(FORMAT, m.height(), m.order().max(), m.order().min(), m.order().fill()).pack());
    }

    /** An empty tree, ready for updates: an interactive index's, made when its design document is saved. */
    public Meta create(Transaction tx, Order order) {
        clearAll(tx);
        tx.set(key(1, EMPTY), encode(new Entry(EMPTY, 0, 0, null, false)));
        Meta m = new Meta(1, order);
        setMeta(tx, m);
        return m;
    }

    /** Clears the tree, if it has any key (a range clear costs later reads on RocksDB, so only when needed). */
    private void clearAll(Transaction tx) {
        byte[][] r = range();
        if (!tx.snapshot().getRangeAsList(r[0], r[1], 1, false).isEmpty()) tx.clear(r[0], r[1]);
    }

    // ---------------------------------------------------------------- rows

    /** Map rows in [lo, hi) (positions; hi null for the end of the view), in index order unless {@code reverse}. */
    public List<TreeReducer.Row> rows(ReadTransaction tx, byte[] lo, byte[] hi, int limit, boolean reverse) {
        List<TreeReducer.Row> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(Keys.concat(rowPrefix, lo), hi == null ? rowEnd : Keys.concat(rowPrefix, hi), limit, reverse)) {
            out.add(row(kv));
        }
        return out;
    }

    /** A stored map row as reducers see it. */
    public TreeReducer.Row row(KeyValue kv) {
        return TreeReducer.Row.stored(suffix(kv.key()), kv.value());
    }

    private long countRows(ReadTransaction tx, byte[] lo, byte[] hi) {
        long n = 0;
        try (var it = tx.getRange(Keys.concat(rowPrefix, lo), hi == null ? rowEnd : Keys.concat(rowPrefix, hi))) {
            while (it.hasNext()) {
                it.next();
                n++;
            }
        }
        return n;
    }

    // ---------------------------------------------------------------- reads

    /**
     * A reduction over a range: how many rows, and their partial (null when none, or for a
     * map-only view); {@code visited} counts the entries and rows read to get it.
     */
    public record Part(long rows, Object partial, long visited) {}

    /**
     * Reduces the rows in [lo, hi): positions, lo inclusive (empty: from the first row), hi
     * exclusive (null: to the last). Reads at most about 2 × Max entries per level: the entries
     * wholly inside the range give their reductions, the two at its edges are descended into.
     * The parts are rereduced once, in index order.
     */
    public Part reduce(ReadTransaction tx, Meta meta, byte[] lo, byte[] hi, boolean countOnly) {
        List<Object> parts = new ArrayList<>();
        long[] rows = {0, 0};
        // Bounds move to the rows they stand for (the first row at or after each): a range that starts
        // or ends where a key does then meets node boundaries, which are cut there, and reads whole entries.
        if (lo.length > 0 || hi != null) {
            List<KeyValue> first = tx.getRangeAsList(Keys.concat(rowPrefix, lo), hi == null ? rowEnd : Keys.concat(rowPrefix, hi), 1, false);
            if (first.isEmpty()) return new Part(0, null, 1);
            if (lo.length > 0) lo = suffix(first.getFirst().key());
            if (hi != null) {
                List<KeyValue> after = tx.getRangeAsList(Keys.concat(rowPrefix, hi), rowEnd, 1, false);
                hi = after.isEmpty() ? null : suffix(after.getFirst().key());
            }
            rows[1] += 2;
        }
        collect(tx, meta.height(), lo, hi, countOnly || reducer == null, parts, rows);
        if (rows[0] == 0 || parts.isEmpty()) return new Part(rows[0], null, rows[1]);
        return new Part(rows[0], parts.size() == 1 ? parts.getFirst() : reducer.rereduce(parts), rows[1]);
    }

    private void collect(ReadTransaction tx, int l, byte[] lo, byte[] hi, boolean countOnly, List<Object> parts, long[] rows) {
        if (hi != null && BYTES.compare(lo, hi) >= 0) return;
        if (l == 0) {
            if (countOnly) {
                long n = countRows(tx, lo, hi);
                rows[0] += n;
                rows[1] += n;
            } else {
                List<TreeReducer.Row> rs = rows(tx, lo, hi, 0, false);
                rows[1] += rs.size();
                if (!rs.isEmpty()) {
                    rows[0] += rs.size();
                    parts.add(reducer.reduce(rs));
                }
            }
            return;
        }
        List<KeyValue> kvs = tx.getRangeAsList(key(l, lo), hi == null ? levelEnd(l) : key(l, hi), 0, false);
        rows[1] += kvs.size();
        if (kvs.isEmpty()) {
            collect(tx, l - 1, lo, hi, countOnly, parts, rows);
            return;
        }
        List<Entry> es = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) es.add(decode(l, kv));
        if (BYTES.compare(lo, es.getFirst().boundary) < 0) collect(tx, l - 1, lo, es.getFirst().boundary, countOnly, parts, rows);
        // The last entry is whole if the range ends where the next one starts: ranges that end where
        // a key ends often do, as nodes are cut where keys change.
        boolean lastWhole = hi == null || tx.get(key(l, hi)) != null;
        for (int i = 0; i < es.size(); i++) {
            Entry e = es.get(i);
            byte[] end = i + 1 < es.size() ? es.get(i + 1).boundary : hi;
            boolean whole = i + 1 < es.size() || lastWhole;
            if (whole && (countOnly || !e.omitted)) {
                if (e.empty()) continue;
                rows[0] += e.rows;
                if (!countOnly) parts.add(reducer.decode(e.reduction));
            } else {
                collect(tx, l - 1, e.boundary, end, countOnly, parts, rows);
            }
        }
    }

    // ---------------------------------------------------------------- summaries

    /** What a run of children adds up to. */
    private record Summary(long rows, Object partial, boolean omitted) {}

    private Summary ofRows(List<TreeReducer.Row> rs) {
        if (rs.isEmpty() || reducer == null) return new Summary(rs.size(), null, false);
        return new Summary(rs.size(), reducer.reduce(rs), false);
    }

    private Summary ofEntries(List<Entry> es) {
        long rows = 0;
        boolean omitted = false;
        List<Object> parts = new ArrayList<>();
        for (Entry e : es) {
            rows += e.rows;
            if (e.empty()) continue;
            if (e.omitted) omitted = true;
            else if (reducer != null && !omitted) parts.add(reducer.decode(e.reduction));
        }
        if (reducer == null || rows == 0) return new Summary(rows, null, false);
        if (omitted) return new Summary(rows, null, true);
        return new Summary(rows, parts.size() == 1 ? parts.getFirst() : reducer.rereduce(parts), false);
    }

    /** An entry for a summary: the partial encoded, or omitted when it is too large to keep. */
    private Entry entry(byte[] boundary, long children, Summary s) {
        if (reducer == null || s.rows == 0) return new Entry(boundary, s.rows, children, null, false);
        if (s.omitted) return new Entry(boundary, s.rows, children, null, true);
        byte[] bytes = reducer.encode(s.partial);
        if (bytes.length > REDUCTION_LIMIT) return new Entry(boundary, s.rows, children, null, true);
        return new Entry(boundary, s.rows, children, bytes, false);
    }

    // ---------------------------------------------------------------- updates

    /**
     * Applies one transaction's row changes (already written to the map range) to the tree, in
     * that transaction. A row removed and inserted again unchanged costs nothing.
     *
     * @return the tree's shape after the change
     */
    public Meta apply(Transaction tx, Meta meta, List<TreeReducer.Row> inserted, List<TreeReducer.Row> removed) {
        List<TreeReducer.Row> ins = new ArrayList<>(inserted);
        List<TreeReducer.Row> rem = new ArrayList<>(removed);
        cancelUnchanged(ins, rem);
        if (ins.isEmpty() && rem.isEmpty()) return meta;
        return new Update(tx, meta).run(ins, rem);
    }

    private static void cancelUnchanged(List<TreeReducer.Row> ins, List<TreeReducer.Row> rem) {
        if (ins.isEmpty() || rem.isEmpty()) return;
        record Same(ByteBuffer suffix, String key, String value) {}
        Map<Same, Integer> removed = new java.util.HashMap<>();
        for (TreeReducer.Row r : rem) removed.merge(new Same(ByteBuffer.wrap(r.suffix()), r.keyJson(), r.valueJson()), 1, Integer::sum);
        List<TreeReducer.Row> keptIns = new ArrayList<>();
        for (TreeReducer.Row r : ins) {
            Same s = new Same(ByteBuffer.wrap(r.suffix()), r.keyJson(), r.valueJson());
            Integer n = removed.get(s);
            if (n != null && n > 0) removed.put(s, n - 1);
            else keptIns.add(r);
        }
        List<TreeReducer.Row> keptRem = new ArrayList<>();
        for (TreeReducer.Row r : rem) {
            Same s = new Same(ByteBuffer.wrap(r.suffix()), r.keyJson(), r.valueJson());
            Integer n = removed.get(s);
            if (n != null && n > 0) {
                keptRem.add(r);
                removed.put(s, n - 1);
            }
        }
        ins.clear();
        ins.addAll(keptIns);
        rem.clear();
        rem.addAll(keptRem);
    }

    /** A change waiting to be applied to one entry: rows in and out, children gained or lost. */
    private final class Pending {
        long rowDelta;
        long childDelta;
        Object added;
        Object removed;
        boolean recompute;

        void addRows(List<TreeReducer.Row> in, List<TreeReducer.Row> out) {
            rowDelta += in.size() - out.size();
            if (reducer == null) return;
            if (!out.isEmpty()) {
                if (reducer.subtracts()) removed = merge(removed, reducer.reduce(out));
                else recompute = true;
            }
            if (!in.isEmpty() && !recompute) added = merge(added, reducer.reduce(in));
        }

        void absorb(Pending o) {
            rowDelta += o.rowDelta;
            childDelta += o.childDelta;
            recompute |= o.recompute;
            if (reducer == null) return;
            if (recompute) {
                added = null;
                removed = null;
                return;
            }
            added = merge(added, o.added);
            removed = merge(removed, o.removed);
        }

        private Object merge(Object a, Object b) {
            if (a == null) return b;
            if (b == null) return a;
            return reducer.rereduce(List.of(a, b));
        }
    }

    /** One application of changes: per level, the entries waiting for a delta. */
    private final class Update {
        final Transaction tx;
        final Order order;
        int height;
        final int startHeight;
        final List<TreeMap<byte[], Pending>> pending = new ArrayList<>();
        /** The top level gained entries (a split there) or lost some (a merge there). */
        boolean topSplit;
        boolean topMerged;

        Update(Transaction tx, Meta meta) {
            this.tx = tx;
            this.order = meta.order();
            this.height = meta.height();
            this.startHeight = height;
        }

        TreeMap<byte[], Pending> pendingAt(int l) {
            while (pending.size() <= l) pending.add(new TreeMap<>(BYTES));
            return pending.get(l);
        }

        Pending pend(int l, byte[] boundary) {
            return pendingAt(l).computeIfAbsent(boundary, b -> new Pending());
        }

        Meta run(List<TreeReducer.Row> ins, List<TreeReducer.Row> rem) {
            assignRows(ins, rem);
            for (int l = 1; l <= height; l++) {
                if (nothingPendingFrom(l) && !(l == height && topSplit)) break;
                TreeMap<byte[], Pending> here = pendingAt(l);
                List<byte[]> applied = new ArrayList<>(here.keySet());
                List<Pending> deltas = new ArrayList<>(here.values());
                here.clear();
                for (int i = 0; i < applied.size(); i++) applyPending(l, applied.get(i), deltas.get(i));
                fixSizes(l, applied);
                if (l < height) propagate(l, applied, deltas);
                if (l == height && topSplit) grow();
            }
            if (topMerged) shrink();
            Meta now = new Meta(height, order);
            if (height != startHeight) setMeta(tx, now);
            return now;
        }

        private boolean nothingPendingFrom(int l) {
            for (int k = l; k < pending.size(); k++) if (!pending.get(k).isEmpty()) return false;
            return true;
        }

        /** Level 1's pending changes: each changed row goes to the entry that contains it. */
        private void assignRows(List<TreeReducer.Row> ins, List<TreeReducer.Row> rem) {
            Comparator<TreeReducer.Row> bySuffix = (a, b) -> BYTES.compare(a.suffix(), b.suffix());
            ins.sort(bySuffix);
            rem.sort(bySuffix);
            int i = 0;
            int r = 0;
            while (i < ins.size() || r < rem.size()) {
                byte[] first = r >= rem.size() || (i < ins.size() && BYTES.compare(ins.get(i).suffix(), rem.get(r).suffix()) <= 0)
                        ? ins.get(i).suffix() : rem.get(r).suffix();
                Entry e = containing(1, first);
                byte[] next = next(1, e.boundary);
                int i0 = i;
                int r0 = r;
                while (i < ins.size() && (next == null || BYTES.compare(ins.get(i).suffix(), next) < 0)) i++;
                while (r < rem.size() && (next == null || BYTES.compare(rem.get(r).suffix(), next) < 0)) r++;
                Pending p = pend(1, e.boundary);
                p.addRows(ins.subList(i0, i), rem.subList(r0, r));
                p.childDelta += (i - i0) - (r - r0); // a level-1 entry's children are its rows
            }
        }

        private void applyPending(int l, byte[] b, Pending p) {
            Entry e = get(l, b);
            if (e == null) throw new IllegalStateException("reduce tree: no entry at level " + l + " for a pending change");
            long rows = e.rows + p.rowDelta;
            long children = e.children + p.childDelta;
            if (reducer == null) {
                put(l, new Entry(b, rows, children, null, false));
                return;
            }
            boolean recompute = rows > 0 && (p.recompute || e.omitted || (p.added == null && e.empty()));
            Object red = null;
            if (!recompute && rows > 0) {
                red = e.empty() ? p.added : p.added == null ? reducer.decode(e.reduction)
                        : reducer.rereduce(List.of(reducer.decode(e.reduction), p.added));
                if (p.removed != null) {
                    red = reducer.subtract(red, p.removed);
                    if (red == null) recompute = true;
                }
            }
            if (recompute) {
                byte[] next = next(l, b);
                Children c = children(l, b, next);
                put(l, entry(b, c.count(), c.summary()));
                return;
            }
            put(l, entry(b, children, new Summary(rows, red, false)));
        }

        /** Splits over-full entries and merges under-full ones, until every entry of the level fits. */
        private void fixSizes(int l, List<byte[]> touched) {
            TreeSet<byte[]> check = new TreeSet<>(BYTES);
            check.addAll(touched);
            while (!check.isEmpty()) {
                byte[] b = check.pollFirst();
                Entry e = get(l, b);
                if (e == null) continue; // merged away
                if (e.children > order.max()) {
                    split(l, e);
                } else if (e.children < order.min()) {
                    byte[] survivor = mergeAway(l, e);
                    if (survivor != null) check.add(survivor);
                }
            }
        }

        private void split(int l, Entry e) {
            byte[] next = next(l, e.boundary);
            Children c = children(l, e.boundary, next);
            int n = c.size();
            List<byte[]> bounds = new ArrayList<>(n);
            for (int i = 0; i < n; i++) bounds.add(c.boundary(i));
            int pieces = 0;
            int start = 0;
            while (start < n) {
                int end = n - start <= order.max() ? n : cut(bounds, start, order.min(), Math.min(order.max(), n - start - order.min()), order);
                byte[] boundary = start == 0 ? e.boundary : c.boundary(start);
                put(l, entry(boundary, end - start, c.summary(start, end)));
                pieces++;
                start = end;
            }
            if (l < height) pend(l + 1, containing(l + 1, e.boundary).boundary).childDelta += pieces - 1;
            else topSplit = true;
        }

        /**
         * An under-full entry joins a neighbour: preferably one under the same parent, so that only
         * this level changes. Returns the entry that remains, or null when there is no neighbour
         * (the only entry of the top level).
         */
        private byte[] mergeAway(int l, Entry e) {
            byte[] b = e.boundary;
            byte[] right = next(l, b);
            boolean first = b.length == 0;
            if (first && right == null) return null;
            byte[] victim;
            if (!first && !parentBoundary(l, b)) victim = b;
            else if (right != null && !parentBoundary(l, right)) victim = right;
            else victim = first ? right : b;
            return removeBoundary(l, victim);
        }

        private boolean parentBoundary(int l, byte[] b) {
            return l < height && tx.get(key(l + 1, b)) != null;
        }

        /**
         * Removes boundary {@code x} from level {@code l} and every level above that has it: the
         * entry there joins the one before it. Levels above this one may still have pending
         * deltas; those move with their entries.
         *
         * @return the boundary of the entry that absorbed it, at level {@code l}
         */
        private byte[] removeBoundary(int l, byte[] x) {
            Entry gone = get(l, x);
            Entry left = previous(l, x);
            Summary merged = mergeSummaries(left, gone);
            put(l, entry(left.boundary, left.children + gone.children, merged));
            tx.clear(key(l, x));
            Pending moved = pendingAt(l).remove(x);
            if (moved != null) pend(l, left.boundary).absorb(moved);
            if (l < height) {
                boolean above = tx.get(key(l + 1, x)) != null;
                pend(l + 1, above ? x : containing(l + 1, x).boundary).childDelta -= 1;
                if (above) removeBoundary(l + 1, x);
            } else {
                topMerged = true;
            }
            return left.boundary;
        }

        private Summary mergeSummaries(Entry a, Entry b) {
            long rows = a.rows + b.rows;
            if (reducer == null || rows == 0) return new Summary(rows, null, false);
            if (a.empty()) return new Summary(rows, b.omitted ? null : reducer.decode(b.reduction), b.omitted);
            if (b.empty()) return new Summary(rows, a.omitted ? null : reducer.decode(a.reduction), a.omitted);
            if (a.omitted || b.omitted) return new Summary(rows, null, true);
            return new Summary(rows, reducer.rereduce(List.of(reducer.decode(a.reduction), reducer.decode(b.reduction))), false);
        }

        /** Each applied entry's row delta goes to its parent, found after this level's splits and merges. */
        private void propagate(int l, List<byte[]> applied, List<Pending> deltas) {
            Entry parent = null;
            byte[] parentEnd = null;
            for (int i = 0; i < applied.size(); i++) {
                byte[] b = applied.get(i);
                if (parent == null || BYTES.compare(b, parent.boundary) < 0 || (parentEnd != null && BYTES.compare(b, parentEnd) >= 0)) {
                    parent = containing(l + 1, b);
                    parentEnd = next(l + 1, parent.boundary);
                }
                Pending d = deltas.get(i);
                Pending up = pend(l + 1, parent.boundary);
                long childDelta = d.childDelta;
                d.childDelta = 0; // a child's own child count does not concern its parent
                up.absorb(d);
                d.childDelta = childDelta;
            }
        }

        /** The top level over Max entries gets a level above it. */
        private void grow() {
            topSplit = false;
            while (true) {
                List<KeyValue> top = tx.getRangeAsList(level(height), levelEnd(height), order.max() + 1, false);
                if (top.size() <= order.max()) return;
                List<Entry> all = new ArrayList<>();
                for (KeyValue kv : tx.getRangeAsList(level(height), levelEnd(height), 0, false)) all.add(decode(height, kv));
                height++;
                Entry root = entry(EMPTY, all.size(), ofEntries(all));
                put(height, root);
                split(height, root);
            }
        }

        /** A top level of one entry above level 1 goes: the level below becomes the top. */
        private void shrink() {
            while (height > 1) {
                List<KeyValue> top = tx.getRangeAsList(level(height), levelEnd(height), 2, false);
                if (top.size() > 1) return;
                tx.clear(level(height), levelEnd(height));
                height--;
            }
        }

        // ---- reads and writes through the transaction (conflict ranges included)

        Entry get(int l, byte[] b) {
            byte[] v = tx.get(key(l, b));
            return v == null ? null : decode(b, v);
        }

        void put(int l, Entry e) {
            tx.set(key(l, e.boundary), ReduceTree.encode(e));
        }

        /** The entry of level {@code l} whose range holds position {@code s}: the last boundary at or before it. */
        Entry containing(int l, byte[] s) {
            List<KeyValue> kv = tx.getRangeAsList(level(l), Keys.keyAfter(key(l, s)), 1, true);
            if (kv.isEmpty()) throw new IllegalStateException("reduce tree: level " + l + " has no leftmost entry");
            return decode(l, kv.getFirst());
        }

        Entry previous(int l, byte[] x) {
            List<KeyValue> kv = tx.getRangeAsList(level(l), key(l, x), 1, true);
            if (kv.isEmpty()) throw new IllegalStateException("reduce tree: nothing before a boundary at level " + l);
            return decode(l, kv.getFirst());
        }

        byte[] next(int l, byte[] b) {
            List<KeyValue> kv = tx.getRangeAsList(Keys.keyAfter(key(l, b)), levelEnd(l), 1, false);
            return kv.isEmpty() ? null : decode(l, kv.getFirst()).boundary;
        }

        Children children(int l, byte[] b, byte[] next) {
            if (l == 1) return new Children(rows(tx, b, next, 0, false), null);
            List<Entry> es = new ArrayList<>();
            for (KeyValue kv : tx.getRangeAsList(key(l - 1, b), next == null ? levelEnd(l - 1) : key(l - 1, next), 0, false)) {
                es.add(decode(l - 1, kv));
            }
            return new Children(null, es);
        }
    }

    /** An entry's children: rows at level 1, entries above. */
    private final class Children {
        final List<TreeReducer.Row> rows;
        final List<Entry> entries;

        Children(List<TreeReducer.Row> rows, List<Entry> entries) {
            this.rows = rows;
            this.entries = entries;
        }

        int size() {
            return rows != null ? rows.size() : entries.size();
        }

        long count() {
            return size();
        }

        byte[] boundary(int i) {
            return rows != null ? rows.get(i).suffix() : entries.get(i).boundary;
        }

        Summary summary() {
            return summary(0, size());
        }

        Summary summary(int from, int to) {
            return rows != null ? ofRows(rows.subList(from, to)) : ofEntries(entries.subList(from, to));
        }
    }

    // ---------------------------------------------------------------- where nodes are cut

    /**
     * Where to end a node that starts at child {@code from}: the child in [from + lo, from + hi]
     * whose key differs most from the one before it (the shortest common prefix of their sort
     * keys), the one nearest {@code fill} among equals. Grouped and ranged queries start and end
     * where keys change, so nodes cut there are read whole instead of descended into: a view with
     * few keys, or an array key's first elements (group_level), lines up with its tree at every
     * level. Rows of one key are all equal here, so long runs are cut at {@code fill}.
     *
     * @return the index of the first child of the next node
     */
    static int cut(List<byte[]> boundaries, int from, int lo, int hi, Order order) {
        int best = -1;
        int bestDepth = Integer.MAX_VALUE;
        int target = from + order.fill();
        for (int c = from + lo; c <= from + hi; c++) {
            int d = depth(boundaries.get(c - 1), boundaries.get(c));
            if (best < 0 || d < bestDepth || (d == bestDepth && Math.abs(c - target) < Math.abs(best - target))) {
                best = c;
                bestDepth = d;
            }
        }
        return best;
    }

    /** How many leading bytes two positions' sort keys share; MAX_VALUE when the keys are equal. */
    static int depth(byte[] previous, byte[] position) {
        if (previous.length == 0) return 0;
        int a = sortKeyEnd(previous);
        int b = sortKeyEnd(position);
        int n = Math.min(a, b);
        int i = Arrays.mismatch(previous, 0, n, position, 0, n);
        if (i < 0) return a == b ? Integer.MAX_VALUE : n;
        return i;
    }

    /** The length of a position's first element: the sort key, as a tuple byte string with its terminator. */
    private static int sortKeyEnd(byte[] position) {
        for (int i = 1; i < position.length; i++) {
            if (position[i] == 0) {
                if (i + 1 < position.length && position[i + 1] == (byte) 0xff) i++;
                else return i + 1;
            }
        }
        return position.length;
    }

    // ---------------------------------------------------------------- bulk load

    /** Where a bulk load runs its transactions: the index's database. */
    public interface Transactions {
        <T> T run(java.util.function.Function<Transaction, T> body);
    }

    /** Children read per bulk-load transaction. */
    static final int BULK_CHUNK = 20_000;
    /** Bytes of entries written per bulk-load transaction, well under FDB's 10 MB however large the reductions (tests lower it). */
    static int bulkBytes = 4_000_000;

    /**
     * Builds the tree from the view's rows, bottom-up, in transactions of at most
     * {@link #BULK_CHUNK} children each (snapshot reads: the caller checks, when it writes the
     * returned meta, that nothing changed the index meanwhile). Nodes are cut where keys change
     * most ({@link #cut}), between {@code min} and {@code max} children, about {@code fill} in
     * runs of one key.
     *
     * @return the shape to write with {@link #setMeta} once the index is known unchanged
     */
    public Meta bulkLoad(Transactions txs, Order order) {
        txs.run(tx -> {
            clearAll(tx);
            return null;
        });
        int l = 1;
        while (true) {
            long count = loadLevel(txs, l, order);
            if (count <= order.max()) return new Meta(l, order);
            l++;
        }
    }

    /** Children read but not yet made into entries, carried between transactions: rows at level 1, entries above. */
    private record Waiting(List<TreeReducer.Row> rows, List<Entry> entries) {
        static Waiting empty() {
            return new Waiting(new ArrayList<>(), new ArrayList<>());
        }

        int size() {
            return rows.size() + entries.size();
        }

        byte[] boundary(int i) {
            return rows.isEmpty() ? entries.get(i).boundary : rows.get(i).suffix();
        }

        Waiting copy() {
            return new Waiting(new ArrayList<>(rows), new ArrayList<>(entries));
        }

        Waiting slice(int from, int to) {
            return rows.isEmpty() ? new Waiting(new ArrayList<>(), new ArrayList<>(entries.subList(from, to)))
                    : new Waiting(new ArrayList<>(rows.subList(from, to)), new ArrayList<>());
        }

        List<byte[]> boundaries() {
            List<byte[]> out = new ArrayList<>(size());
            for (int i = 0; i < size(); i++) out.add(boundary(i));
            return out;
        }
    }

    /**
     * @param from where the next transaction reads on
     * @param previous the last node cut, not yet written: the level's end may have to rebalance it
     * @param first whether {@code previous} is the level's first node (its boundary is the empty one)
     */
    private record LoadState(byte[] from, Waiting previous, boolean first, Waiting buffer, long written, boolean done) {}

    private long loadLevel(Transactions txs, int l, Order order) {
        LoadState s = new LoadState(l == 1 ? rowPrefix : level(l - 1), null, true, Waiting.empty(), 0, false);
        while (!s.done) {
            LoadState in = s;
            s = retryUnknown(() -> txs.run(tx -> loadChunk(tx, l, order, in)));
        }
        return s.written;
    }

    /**
     * Reads the next children and cuts nodes from them ({@link #cut}) as soon as more than
     * {@code max} are waiting, so every cut sees its whole window.
     */
    private LoadState loadChunk(Transaction tx, int l, Order order, LoadState in) {
        Waiting previous = in.previous == null ? null : in.previous.copy();
        boolean first = in.first;
        Waiting buffer = in.buffer.copy();
        long written = in.written;
        long bytes = 0;
        byte[] end = l == 1 ? rowEnd : levelEnd(l - 1);
        List<KeyValue> kvs = tx.snapshot().getRangeAsList(in.from, end, BULK_CHUNK, false);
        for (int i = 0; i < kvs.size(); i++) {
            KeyValue kv = kvs.get(i);
            if (l == 1) buffer.rows.add(row(kv));
            else buffer.entries.add(decode(l - 1, kv));
            if (buffer.size() > order.max()) {
                int c = cut(buffer.boundaries(), 0, order.min(), order.max(), order);
                if (previous != null) {
                    bytes += write(tx, l, previous, first);
                    written++;
                    first = false;
                }
                previous = buffer.slice(0, c);
                buffer = buffer.slice(c, buffer.size());
                if (bytes > bulkBytes && i + 1 < kvs.size()) {
                    return new LoadState(Keys.keyAfter(kv.key()), previous, first, buffer, written, false);
                }
            }
        }
        if (kvs.size() == BULK_CHUNK) {
            return new LoadState(Keys.keyAfter(kvs.getLast().key()), previous, first, buffer, written, false);
        }
        // The level's last children: too few for a node of their own, they join the one before.
        if (previous != null && buffer.size() < order.min()) {
            Waiting all = previous.copy();
            all.rows.addAll(buffer.rows);
            all.entries.addAll(buffer.entries);
            if (all.size() <= order.max()) {
                previous = all;
                buffer = null;
            } else {
                int c = cut(all.boundaries(), 0, order.min(), all.size() - order.min(), order);
                previous = all.slice(0, c);
                buffer = all.slice(c, all.size());
            }
        }
        if (previous != null) {
            write(tx, l, previous, first);
            written++;
            first = false;
        }
        if (buffer != null && (buffer.size() > 0 || first)) {
            write(tx, l, buffer, first);
            written++;
        }
        return new LoadState(null, null, false, null, written, true);
    }

    /** @return the bytes written */
    private long write(Transaction tx, int l, Waiting g, boolean first) {
        byte[] boundary = first ? EMPTY : g.boundary(0);
        Summary s = g.rows.isEmpty() && !g.entries.isEmpty() ? ofEntries(g.entries) : ofRows(g.rows);
        byte[] k = key(l, boundary);
        byte[] v = encode(entry(boundary, g.size(), s));
        tx.set(k, v);
        return k.length + v.length;
    }

    /** A bulk-load chunk writes the same keys and values again when retried, so a 1021 just runs it again. */
    private static <T> T retryUnknown(java.util.function.Supplier<T> body) {
        for (int attempt = 0; ; attempt++) {
            try {
                return body.get();
            } catch (dev.chaise.kv.KvException e) {
                if (e.code() != dev.chaise.kv.KvException.COMMIT_UNKNOWN_RESULT || attempt > 20) throw e;
            }
        }
    }

    // ---------------------------------------------------------------- invariants

    /**
     * Walks the whole tree and lists every broken invariant (see the class comment): for tests,
     * which call it after their runs; reads everything, so only for small trees.
     */
    public List<String> check(ReadTransaction tx) {
        List<String> problems = new ArrayList<>();
        Meta meta = meta(tx);
        if (meta == null) {
            problems.add("no meta");
            return problems;
        }
        Order o = meta.order();
        int h = meta.height();
        byte[][] all = range();
        for (KeyValue kv : tx.getRangeAsList(all[0], all[1], 0, false)) {
            Tuple t = db.space().unpack(kv.key());
            long lv = t.getLong(5);
            if (lv > h) problems.add("an entry above the top level " + h + ": level " + lv);
        }
        List<Entry> below = null;
        for (int l = 1; l <= h; l++) {
            List<Entry> es = new ArrayList<>();
            for (KeyValue kv : tx.getRangeAsList(level(l), levelEnd(l), 0, false)) es.add(decode(l, kv));
            if (es.isEmpty() || es.getFirst().boundary.length != 0) {
                problems.add("level " + l + " has no leftmost entry");
                return problems;
            }
            if (l == h && es.size() > o.max()) problems.add("top level " + l + " has " + es.size() + " entries");
            if (l == h && h > 1 && es.size() < 2) problems.add("top level " + l + " has one entry");
            for (int i = 0; i < es.size(); i++) {
                Entry e = es.get(i);
                byte[] next = i + 1 < es.size() ? es.get(i + 1).boundary : null;
                String where = "level " + l + " entry " + i;
                boolean soleTop = l == h && es.size() == 1;
                if ((!soleTop && e.children < o.min()) || e.children > o.max()) problems.add(where + " has " + e.children + " children");
                if (l == 1) {
                    List<TreeReducer.Row> rs = rows(tx, e.boundary, next, 0, false);
                    if (rs.size() != e.children || rs.size() != e.rows) {
                        problems.add(where + " counts " + e.rows + "/" + e.children + " but covers " + rs.size() + " rows");
                    }
                    compare(where, e, ofRows(rs), problems);
                } else {
                    List<Entry> kids = new ArrayList<>();
                    for (Entry k : below) {
                        if (BYTES.compare(k.boundary, e.boundary) >= 0 && (next == null || BYTES.compare(k.boundary, next) < 0)) kids.add(k);
                    }
                    if (kids.isEmpty() || BYTES.compare(kids.getFirst().boundary, e.boundary) != 0) {
                        problems.add(where + "'s boundary is not a boundary of level " + (l - 1));
                    }
                    long rows = kids.stream().mapToLong(Entry::rows).sum();
                    if (kids.size() != e.children || rows != e.rows) {
                        problems.add(where + " counts " + e.rows + "/" + e.children + " but covers " + rows + " rows in " + kids.size() + " children");
                    }
                    compare(where, e, ofEntries(kids), problems);
                }
            }
            below = es;
        }
        return problems;
    }

    private void compare(String where, Entry e, Summary expected, List<String> problems) {
        Entry want = entry(e.boundary, e.children, expected);
        if (want.omitted != e.omitted) {
            problems.add(where + (e.omitted ? " is omitted without reason" : " should be omitted"));
        } else if (!Arrays.equals(want.reduction, e.reduction) && !(want.reduction != null && e.reduction != null
                && reducer.failed(reducer.decode(want.reduction)) && reducer.failed(reducer.decode(e.reduction)))) {
            problems.add(where + "'s reduction " + show(e.reduction) + " is not its children's " + show(want.reduction));
        }
    }

    private String show(byte[] red) {
        if (red == null) return "none";
        Object p = reducer.decode(red);
        return String.valueOf(p instanceof byte[] ? "bytes" : p);
    }
}
