package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.Collation;
import dev.chaise.views.index.TreeReducer;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Reduces map rows, which arrive in query order, group by group: rows whose keys collate equal (at
 * {@code group_level}, on array keys the first N elements) form one group. Streaming: one group's
 * accumulator in memory at a time. The fallback while a view's reduce tree is being built.
 */
final class Grouper implements Iterator<ViewRow> {
    private final Iterator<TreeReducer.Row> rows;
    private final Reducer<?> reducer;
    private final long level;
    private final boolean descending;
    private final Collation collation;
    private TreeReducer.Row pending;

    /** @param level 0 for one group over everything, {@link ViewQuery#EXACT} for the whole key */
    Grouper(Iterator<TreeReducer.Row> rows, Reducer<?> reducer, long level, boolean descending, Collation collation) {
        this.collation = collation;
        this.rows = rows;
        this.reducer = reducer;
        this.level = level;
        this.descending = descending;
    }

    static JsonNode groupKey(JsonNode key, long level) {
        if (level == 0) return Json.NODES.nullNode();
        if (level == ViewQuery.EXACT || !key.isArray() || key.size() <= level) return key;
        ArrayNode a = Json.NODES.arrayNode();
        for (int i = 0; i < level; i++) a.add(key.get(i));
        return a;
    }

    @Override
    public boolean hasNext() {
        return pending != null || rows.hasNext(); // no rows, no groups: CouchDB answers {"rows":[]}
    }

    @Override
    public ViewRow next() {
        if (!hasNext()) throw new NoSuchElementException();
        TreeReducer.Row start = pending != null ? pending : rows.next();
        pending = null;
        JsonNode key = groupKey(start.key(), level);
        Reducer.Accumulator<?> acc = reducer.accumulator(descending);
        acc.add(start);
        while (rows.hasNext()) {
            TreeReducer.Row r = rows.next();
            if (level != 0 && collation.compare(groupKey(r.key(), level), key) != 0) {
                pending = r;
                break;
            }
            acc.add(r);
        }
        return acc.row(key);
    }
}
