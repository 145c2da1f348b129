package dev.chaise.views.index;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.kv.Keys;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.DbHandle;
import dev.chaise.views.collation.Collation;
import java.util.Arrays;

/**
 * The sort keys of a partitioned view (CouchDB keeps {@code {p, Partition, Key}} as such a view's
 * keys): the partition, tuple-encoded (prefix-free, in byte order), before the key's own encoding.
 * A partition's rows are then one contiguous run of the view's map range, so a partition query
 * is one range, and ranges, {@code group_level} and the reduce tree work within it unchanged.
 *
 * <pre>
 * (…, MAP_RANGE, ViewId, SortKey = [Tuple(Partition) ++ Collation(Key)], DocId, DupeId) = (KeyJson, ValueJson)
 * </pre>
 *
 * The row's value keeps the emitted key alone, so rows read back as the map function emitted them.
 */
public final class PartitionedKeys {
    private PartitionedKeys() {}

    /** The bytes every sort key of {@code partition}'s rows starts with. */
    public static byte[] prefix(String partition) {
        return Tuple.from(partition).pack();
    }

    /** {@code key}'s sort key, in {@code collation}, in {@code partition} (null: a view that is not partitioned). */
    public static byte[] sortKey(Collation collation, String partition, JsonNode key) {
        byte[] k = collation.encode(key);
        return partition == null ? k : Keys.concat(prefix(partition), k);
    }

    /** Every row of {@code partition} in a view: the rows whose sort key starts with its prefix. */
    public static byte[][] range(DbHandle db, String sig, int viewId, String partition) {
        byte[] element = TupleBytes.pack((Object) prefix(partition));
        byte[] lo = Keys.concat(MapIndexSubspace.rowPrefix(db, sig, viewId), Arrays.copyOf(element, element.length - 1)); // no terminator
        return new byte[][] {lo, Keys.strinc(lo)};
    }
}
