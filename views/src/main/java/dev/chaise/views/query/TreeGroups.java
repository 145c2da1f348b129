package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.kv.Keys;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.PartitionedKeys;
import dev.chaise.views.collation.Collation;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ReduceTree;
import dev.chaise.views.index.TreeReducer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * A reduce query answered from a view's reduce tree, streamed group by group. Groups are
 * contiguous runs of the view: the first row at the current position names the next group, whose
 * range follows from its key ({@code group_level} N of an array key: every key that starts with
 * those N elements; otherwise every row with an equal key). A group is reduced from the rows already
 * read when it ends among them, else by the tree over its range: O(log n) entries however large it
 * is. Groups are computed in read transactions of bounded time, each at one snapshot.
 */
final class TreeGroups implements Iterator<ViewRow> {
    /** Rows read ahead while groups are small: a run of one-row groups costs one range read per this many. */
    private static final int READ_AHEAD = 64;
    private static final long BATCH_NANOS = 200_000_000L;

    private final Database db;
    private final ReduceTree tree;
    private final Reducer<Object> reducer;
    private final long level;
    private final boolean descending;
    private final byte[] lo;
    private final byte[] hi;
    private final List<JsonNode> keys;
    private final String partition;
    private final Collation collation;
    /** Groups computed, each finished only when handed out: a failure stops the stream at its own group. */
    private final ArrayDeque<Group> ready = new ArrayDeque<>();
    /** Ascending: the next group starts here; descending: the next group ends before here (null: the end). */
    private byte[] position;
    private int nextKey;
    private boolean done;
    private int batch = 4;

    @SuppressWarnings("unchecked")
    TreeGroups(Database db, String sig, int viewId, Reducer<?> reducer, ViewQuery q, long level, Collation collation, byte[][] bounds) {
        this.db = db;
        this.collation = collation;
        DbHandle h = db.handle();
        this.tree = new ReduceTree(h, sig, viewId, reducer);
        this.reducer = (Reducer<Object>) reducer;
        this.level = level;
        this.descending = q.descending();
        this.keys = q.keys();
        this.partition = q.partition();
        byte[] prefix = MapIndexSubspace.rowPrefix(h, sig, viewId);
        if (keys != null || bounds == null) {
            lo = new byte[0];
            hi = null;
            done = keys == null; // an empty range has no groups
        } else {
            lo = position(bounds[0], prefix, true);
            hi = position(bounds[1], prefix, false);
        }
        position = descending ? hi : lo;
    }

    /** A range bound as a position in the view; the view's own ends become open ends. */
    private static byte[] position(byte[] key, byte[] prefix, boolean low) {
        if (!Keys.startsWith(key, prefix) || key.length == prefix.length) return low ? new byte[0] : null;
        byte[] p = Arrays.copyOfRange(key, prefix.length, key.length);
        if (low && p.length == 1 && p[0] == 0x00) return new byte[0];
        if (!low && p.length == 1 && p[0] == (byte) 0xff) return null;
        return p;
    }

    @Override
    public boolean hasNext() {
        while (ready.isEmpty() && !done) fetch();
        return !ready.isEmpty();
    }

    @Override
    public ViewRow next() {
        if (!hasNext()) throw new NoSuchElementException();
        Group g = ready.poll();
        return reducer.row(g.key, g.partial);
    }

    private record Group(JsonNode key, Object partial) {}

    private record Batch(List<Group> rows, byte[] position, int nextKey, boolean done) {}

    private void fetch() {
        int want = batch;
        Batch b = db.read(r -> {
            ReduceTree.Meta meta = tree.meta(r.tx());
            if (meta == null) throw new IllegalStateException("the reduce tree of this view went away during the query");
            return keys != null ? byKeys(r.tx(), meta, want) : level == 0 ? whole(r.tx(), meta) : grouped(r.tx(), meta, want);
        });
        ready.addAll(b.rows);
        position = b.position;
        nextKey = b.nextKey;
        done = b.done;
        batch = Math.min(batch * 4, 4096);
    }

    /** No grouping: one reduction over the range, none if it holds no rows. */
    private Batch whole(ReadTransaction tx, ReduceTree.Meta meta) {
        ReduceTree.Part p = tree.reduce(tx, meta, lo, hi, false);
        List<Group> out = p.rows() == 0 ? List.of() : List.of(new Group(Json.NODES.nullNode(), p.partial()));
        return new Batch(out, null, 0, true);
    }

    /** {@code keys=[...]} (with {@code group=true}): each key's rows are one group, in the order given. */
    private Batch byKeys(ReadTransaction tx, ReduceTree.Meta meta, int want) {
        List<Group> out = new ArrayList<>();
        int k = nextKey;
        long start = System.nanoTime();
        for (; k < keys.size() && out.size() < want && System.nanoTime() - start < BATCH_NANOS; k++) {
            byte[] from = exactKey(TupleBytes.pack(PartitionedKeys.sortKey(collation, partition, keys.get(k))));
            byte[] to = Keys.strinc(from);
            List<TreeReducer.Row> first = tree.rows(tx, from, to, 1, descending);
            if (first.isEmpty()) continue;
            ReduceTree.Part p = tree.reduce(tx, meta, from, to, false);
            out.add(new Group(first.getFirst().key(), p.partial()));
        }
        return new Batch(out, null, k, k >= keys.size());
    }

    /** Groups from the current position, until {@code want} of them or the batch's time is up. */
    private Batch grouped(ReadTransaction tx, ReduceTree.Meta meta, int want) {
        List<Group> out = new ArrayList<>();
        byte[] p = position;
        List<TreeReducer.Row> buffer = new ArrayList<>(); // rows from p on, in read order
        boolean complete = false; // the buffer holds every row left in the range
        int ahead = READ_AHEAD;
        long start = System.nanoTime();
        while (out.size() < want && System.nanoTime() - start < BATCH_NANOS) {
            if (buffer.isEmpty()) {
                if (complete) return new Batch(out, p, 0, true);
                buffer = descending ? tree.rows(tx, lo, p, ahead, true) : tree.rows(tx, p, hi, ahead, false);
                complete = buffer.size() < ahead;
                if (buffer.isEmpty()) return new Batch(out, p, 0, true);
            }
            TreeReducer.Row first = buffer.getFirst();
            JsonNode key = Grouper.groupKey(first.key(), level);
            byte[][] g = groupRange(first, key);
            // The group's part of the query's range, and the rows of it the buffer holds.
            byte[] from = descending ? max(g[0], lo) : p;
            byte[] to = descending ? p : (hi == null ? g[1] : min(g[1], hi));
            int n = 0;
            while (n < buffer.size() && inside(buffer.get(n).suffix(), from, to)) n++;
            Object partial;
            if (n < buffer.size() || complete) {
                List<TreeReducer.Row> rows = new ArrayList<>(buffer.subList(0, n));
                if (descending) Collections.reverse(rows);
                partial = reducer.reduce(rows);
                buffer = new ArrayList<>(buffer.subList(n, buffer.size()));
                ahead = READ_AHEAD;
            } else {
                ReduceTree.Part part = tree.reduce(tx, meta, from, to, false);
                partial = part.partial();
                buffer = new ArrayList<>();
                ahead = part.rows() > READ_AHEAD ? 1 : READ_AHEAD;
            }
            out.add(new Group(key, partial));
            p = descending ? from : to;
            if (descending ? Arrays.compareUnsigned(p, lo) <= 0 : hi != null && Arrays.compareUnsigned(p, hi) >= 0) {
                return new Batch(out, p, 0, true);
            }
        }
        return new Batch(out, p, 0, false);
    }

    private static boolean inside(byte[] s, byte[] from, byte[] to) {
        return Arrays.compareUnsigned(s, from) >= 0 && (to == null || Arrays.compareUnsigned(s, to) < 0);
    }

    /**
     * The positions of a group: an array key at {@code group_level} N with at least N elements
     * groups every key that starts with the same N (their encodings share a prefix, as the
     * encoding is element by element); any other key groups the rows with an equal key.
     */
    private byte[][] groupRange(TreeReducer.Row row, JsonNode groupKey) {
        JsonNode key = row.key();
        byte[] from;
        if (level != ViewQuery.EXACT && key.isArray() && key.size() >= level) {
            byte[] encoded = PartitionedKeys.sortKey(collation, partition, groupKey);
            byte[] prefix = Arrays.copyOf(encoded, encoded.length - 1); // without the array's end
            byte[] element = TupleBytes.pack((Object) prefix);
            from = Arrays.copyOf(element, element.length - 1); // without the byte string's terminator
        } else {
            from = exactKey(row.suffix());
        }
        return new byte[][] {from, Keys.strinc(from)};
    }

    /** The first element of a position (the sort key as a tuple byte string, with its terminator). */
    private static byte[] exactKey(byte[] position) {
        for (int i = 1; i < position.length; i++) {
            if (position[i] == 0 && (i + 1 == position.length || position[i + 1] != (byte) 0xff)) return Arrays.copyOf(position, i + 1);
            if (position[i] == 0) i++; // an escaped 0x00
        }
        throw new IllegalStateException("not a view row position");
    }

    private static byte[] max(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b) >= 0 ? a : b;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b) <= 0 ? a : b;
    }
}
