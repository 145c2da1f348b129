package dev.chaise.views;

import dev.chaise.storage.Database;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.StorageException;
import dev.chaise.views.index.DesignDoc;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Owns reading design documents as index definitions: the winning revision of one, parsed once
 * per revision (its signature's md5 too), and the ids of a database's live ones.
 */
public final class DesignDocs {
    /** A parsed revision: a new revision is a new key, so nothing is ever stale. */
    private record Key(long db, String id, String rev) {}

    private final ConcurrentHashMap<Key, DesignDoc> parsed = new ConcurrentHashMap<>();
    /** CouchDB's ddoc_cache.hit and .miss: this is the cache of design documents views and Mango read. */
    private final dev.chaise.stats.Counter hits;
    private final dev.chaise.stats.Counter misses;

    public DesignDocs(dev.chaise.stats.Stats stats) {
        hits = stats.counter("ddoc_cache.hit", "number of design documents found parsed at their current revision");
        misses = stats.counter("ddoc_cache.miss", "number of design documents read and parsed");
    }

    /** The design document {@code _design/name}; 404 {@code missing}/{@code deleted} as for any document. */
    public DesignDoc get(Database db, String ddocId) {
        // One point read names the winning revision.
        DocInfo w = db.winner(ddocId);
        if (w == null) throw StorageException.notFound("missing");
        if (w.deleted()) throw StorageException.notFound("deleted");
        Key k = new Key(db.handle().id(), ddocId, w.rev().toString());
        DesignDoc cached = parsed.get(k);
        if (cached != null) {
            hits.increment();
            return cached;
        }
        misses.increment();
        var d = db.get(ddocId, w.rev(), false);
        DesignDoc ddoc = DesignDoc.parse(ddocId, d.body());
        if (parsed.size() > 1000) parsed.clear();
        parsed.put(k, ddoc);
        return ddoc;
    }

    /** The ids of the database's live design documents. */
    static List<String> ids(Database db) {
        List<String> ids = new ArrayList<>();
        var range = new Database.IdRange(DocumentJson.DESIGN_PREFIX, DocumentJson.DESIGN_END, false);
        db.allDocs(range, ScanProperties.FORWARD, null, (r, row) -> row.id()).forEachRemaining(ids::add);
        return ids;
    }
}
