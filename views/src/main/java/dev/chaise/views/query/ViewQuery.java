package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.collation.Collation;
import java.util.List;

/**
 * The parameters of a view query (couch_mrview's mrargs), as parsed; {@link #validate} then
 * checks them against the kind of view, as CouchDB does once it knows whether the view reduces.
 *
 * @param keys null unless {@code keys} was given
 * @param startKey null if not given ({@code key} sets both ends)
 * @param reduce null if not given
 * @param group null if not given
 * @param groupLevel null if not given
 * @param limit {@link Long#MAX_VALUE} if not given
 * @param partition the partition a query of a partitioned database keeps to, or null
 */
public record ViewQuery(List<JsonNode> keys, JsonNode startKey, String startDocId, JsonNode endKey, String endDocId,
                        boolean inclusiveEnd, boolean descending, long skip, long limit, boolean includeDocs,
                        Boolean conflicts, boolean updateSeq, Boolean reduce, Boolean group, Long groupLevel,
                        Update update, boolean sorted, boolean keyGiven, String partition) {

    /** A query of no partition. */
    public ViewQuery(List<JsonNode> keys, JsonNode startKey, String startDocId, JsonNode endKey, String endDocId,
                     boolean inclusiveEnd, boolean descending, long skip, long limit, boolean includeDocs,
                     Boolean conflicts, boolean updateSeq, Boolean reduce, Boolean group, Long groupLevel,
                     Update update, boolean sorted, boolean keyGiven) {
        this(keys, startKey, startDocId, endKey, endDocId, inclusiveEnd, descending, skip, limit, includeDocs, conflicts, updateSeq,
                reduce, group, groupLevel, update, sorted, keyGiven, null);
    }

    public enum Update { TRUE, FALSE, LAZY }

    /**
     * The keys of a multi-key query in the order their rows come: reversed when descending, as
     * fabric_view_map reverses them. Null without {@code keys}.
     */
    public List<JsonNode> keysInOrder() {
        if (keys == null || !descending) return keys;
        List<JsonNode> out = new java.util.ArrayList<>(keys);
        java.util.Collections.reverse(out);
        return out;
    }

    /**
     * One key of a multi-key query as a range query of its own, as couch_mrview_util's key_opts
     * makes it: that key at both ends, with the query's {@code start_key_docid},
     * {@code end_key_docid} and {@code inclusive_end}.
     */
    public ViewQuery forKey(JsonNode key) {
        return new ViewQuery(null, key, startDocId, key, endDocId, inclusiveEnd, descending, skip, limit, includeDocs, conflicts, updateSeq,
                reduce, group, groupLevel, update, sorted, true, partition);
    }

    /** This query with another {@code limit} (a server's query limit for a query that named none). */
    public ViewQuery withLimit(long newLimit) {
        return new ViewQuery(keys, startKey, startDocId, endKey, endDocId, inclusiveEnd, descending, skip, newLimit, includeDocs, conflicts, updateSeq,
                reduce, group, groupLevel, update, sorted, keyGiven, partition);
    }

    /** {@link #groupLevel()} when {@code group=true}: group by the whole key. */
    public static final long EXACT = Long.MAX_VALUE;

    /**
     * Checks the query against the view (validate_args in couch_mrview_util) and says how it runs.
     *
     * @param hasReduce whether the view has a reduce function
     * @return the resolved plan
     */
    public Plan validate(boolean hasReduce) {
        long level = resolvedGroupLevel();
        boolean reducing = hasReduce && (reduce == null || reduce);
        if (!hasReduce && Boolean.TRUE.equals(reduce)) throw error("Reduce is invalid for map-only views.");
        if (reducing && keys != null && level != EXACT) throw error("Multi-key fetches for reduce views must use `group=true`");
        if (keys != null && !keys.isEmpty() && (startKey != null || endKey != null)) {
            boolean single = keys.size() == 1 && keys.getFirst().equals(startKey) && keys.getFirst().equals(endKey);
            if (!single) throw error("`keys` is incompatible with `key`, `start_key` and `end_key`");
        }
        if (level != 0 && !reducing) throw error("Invalid use of grouping on a map view."); // reduce=false makes it a map view
        if (reducing && includeDocs) throw error("`include_docs` is invalid for reduce");
        if (reducing && conflicts != null) throw error("`conflicts` is invalid for reduce views.");
        return new Plan(reducing, reducing ? level : 0);
    }

    /**
     * couch_mrview_util's check_range for views: a start past the end in view collation is a
     * mistake worth a 400 ({@code _all_docs} compares raw ids and does not ask).
     *
     * @param collation the view's: its btree's less function decides
     */
    public void checkRange(Collation collation) {
        if (keys != null || startKey == null || endKey == null || startKey.equals(endKey)) return;
        int c = collation.compare(startKey, endKey);
        if (c == 0) {
            String s = startDocId != null ? startDocId : descending ? "\uffff" : "";
            String e = endDocId != null ? endDocId : descending ? "" : "\uffff";
            c = s.compareTo(e);
        }
        if (!descending && c > 0) {
            throw error("No rows can match your key range, reverse your start_key and end_key or set descending=true");
        }
        if (descending && c < 0) {
            throw error("No rows can match your key range, reverse your start_key and end_key or set descending=false");
        }
    }

    /** How a validated query runs: as map rows, or reduced and grouped at {@code groupLevel}. */
    public record Plan(boolean reduce, long groupLevel) {}

    /** couch_mrview's determine_group_level. */
    long resolvedGroupLevel() {
        if (group == null || !group) {
            if (Boolean.FALSE.equals(group) && groupLevel != null && groupLevel > 0) {
                throw error("Can't specify group=false and group_level>0 at the same time");
            }
            return groupLevel == null ? 0 : groupLevel;
        }
        return groupLevel == null ? EXACT : groupLevel;
    }

    private static ViewException error(String reason) {
        return new ViewException(ViewException.Kind.QUERY_PARSE_ERROR, reason);
    }
}
