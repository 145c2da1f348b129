package dev.chaise.views;

import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.StorageException;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ViewException;
import java.util.ArrayList;
import java.util.List;

/**
 * Owns what an admin asks of a database's indexes beside their rows: an index's {@code _info},
 * the map errors it stored, and {@code _view_cleanup}.
 */
public final class IndexMaintenance {
    private final DesignDocs designs;
    private final IndexBuilds builds;

    IndexMaintenance(DesignDocs designs, IndexBuilds builds) {
        this.designs = designs;
        this.builds = builds;
    }

    /** The view index's info for {@code _info}. */
    public IndexInfo info(Database db, String ddocId) {
        DesignDoc ddoc = designs.get(db, ddocId);
        String sig = ddoc.signature();
        boolean running = builds.running(db, ddoc);
        return db.read(r -> {
            long size = 0;
            for (int v = 0; v < ddoc.views().size(); v++) size += MapIndexSubspace.kvSize(r.tx(), r.handle(), sig, v);
            return new IndexInfo(sig, ddoc.language(), size, size, MapIndexSubspace.updateSeq(r.tx(), r.handle(), sig), running, r.updateSeq());
        });
    }

    /** {@code _view_cleanup}: drops every index no live design document's signature names. */
    public void cleanup(Database db) {
        List<String> live = new ArrayList<>();
        for (String id : DesignDocs.ids(db)) {
            try {
                live.add(designs.get(db, id).signature());
            } catch (StorageException | ViewException e) {
                // deleted since, or not an index definition: it keeps nothing alive
            }
        }
        db.subspaces().run((tx, h) -> { // after a 1021, clearing again is harmless
            for (String sig : MapIndexSubspace.signatures(tx, h)) {
                if (!live.contains(sig)) MapIndexSubspace.clear(tx, h, sig);
            }
            return null;
        });
    }

    /** Map errors stored for a view (beyond RFC E): doc id, rev and message, by doc id. */
    public List<MapIndexSubspace.MapError> errors(Database db, String ddocId, String viewName, int limit) {
        DesignDoc ddoc = designs.get(db, ddocId);
        int viewId = ddoc.viewIndex(viewName);
        if (viewId < 0) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        builds.refresh(db, ddoc);
        return db.read(reader -> {
            DbHandle h = reader.handle();
            byte[][] r = MapIndexSubspace.errorRange(h, ddoc.signature(), viewId);
            List<MapIndexSubspace.MapError> out = new ArrayList<>();
            for (var row : reader.tx().getRangeAsList(r[0], r[1], limit, false)) out.add(MapIndexSubspace.decodeError(h, row));
            return out;
        });
    }
}
