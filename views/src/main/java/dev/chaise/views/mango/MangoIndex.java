package dev.chaise.views.mango;

import dev.chaise.views.collation.RawOrder;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Comparator;
import java.util.List;

/**
 * An index {@code _find} can run on: the special {@code _all_docs} index every database has
 * (documents by id), or a JSON index.
 *
 * @param json null for the special index
 */
record MangoIndex(JsonIndex json) {
    static final MangoIndex SPECIAL = new MangoIndex(null);
    static final List<String> SPECIAL_COLUMNS = List.of("_id");

    /** CouchDB's tie-break, {@code {DbName, DDoc, Name}}: the special index (no design document) first. */
    static final Comparator<MangoIndex> ORDER = Comparator.comparing((MangoIndex i) -> i.special() ? 0 : 1)
            .thenComparing(i -> i.special() ? "" : i.ddoc(), RawOrder::compareStrings)
            .thenComparing(MangoIndex::name, RawOrder::compareStrings);

    boolean special() {
        return json == null;
    }

    String ddoc() {
        return special() ? null : json.ddoc();
    }

    String name() {
        return special() ? "_all_docs" : json.name();
    }

    List<String> columns() {
        return special() ? SPECIAL_COLUMNS : json.columns();
    }

    boolean partial() {
        return !special() && json.isPartial();
    }

    ObjectNode toJson() {
        return special() ? Find.specialIndex() : json.toJson();
    }

    /** Whether its rows alone answer a query needing {@code fields} (CouchDB 3.4's covering indexes): never for the special index. */
    boolean covers(List<String> fields) {
        if (special() || fields == null) return false;
        for (String f : fields) if (!f.equals("_id") && !json.columns().contains(f)) return false;
        return true;
    }

    /** What bookmarks record, so a later page runs on the same index. */
    String id() {
        return special() ? "_all_docs" : json.ddoc() + "\u0000" + json.name();
    }
}
