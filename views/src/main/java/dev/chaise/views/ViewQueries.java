package dev.chaise.views;

import dev.chaise.storage.Database;
import dev.chaise.storage.Sequence;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.TreeReducer;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.ReduceProgram;
import dev.chaise.views.mango.ViewIndexes;
import dev.chaise.views.query.BuiltinReducers;
import dev.chaise.views.query.Reducer;
import dev.chaise.views.query.ViewQuery;
import dev.chaise.views.query.ViewReader;
import dev.chaise.views.query.ViewRow;
import dev.chaise.views.query.Views;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Owns reading indexes: view queries (the index made current as {@code update} asks, then the
 * rows streamed), and readiness for other readers of an index (Mango's {@code _find}).
 */
public final class ViewQueries implements ViewIndexes {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ViewQueries.class);
    private final DesignDocs designs;
    private final IndexPrograms programs;
    private final IndexBuilds builds;
    private final InteractiveIndexes interactive;

    ViewQueries(DesignDocs designs, IndexPrograms programs, IndexBuilds builds, InteractiveIndexes interactive) {
        this.designs = designs;
        this.programs = programs;
        this.builds = builds;
        this.interactive = interactive;
    }

    /**
     * A view query's answer; rows stream from the index as they are consumed. Close it when done:
     * a JavaScript reduce holds a pooled engine context.
     */
    public record Result(boolean reduced, Long totalRows, Long offset, Sequence updateSeq, Iterator<ViewRow> rows, AutoCloseable resources)
            implements AutoCloseable {
        @Override
        public void close() {
            try {
                if (resources != null) resources.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public DesignDoc designDoc(Database db, String ddocId) {
        return designs.get(db, ddocId);
    }

    /** {@code couch_mrview_util:validate_args}: a partitioned view is queried one partition at a time, any other never so. */
    private static void checkPartition(Database db, DesignDoc ddoc, ViewQuery q) {
        boolean partitioned = ddoc.partitioned(db.partitioned());
        if (partitioned && q.partition() == null) {
            throw new ViewException(ViewException.Kind.QUERY_PARSE_ERROR, "`partition` parameter is mandatory for queries to this view.");
        }
        if (!partitioned && q.partition() != null) {
            throw new ViewException(ViewException.Kind.QUERY_PARSE_ERROR, "`partition` parameter is not supported in this design doc");
        }
    }

    /** Runs a view query: updates the index as {@code update} asks, then streams the rows. */
    public Result query(Database db, String ddocId, String viewName, ViewQuery q) {
        return query(db, ddocId, viewName, q, ViewReader.DocAttachments.STUBS);
    }

    /** @param atts with {@code include_docs}: what the documents' attachments show */
    public Result query(Database db, String ddocId, String viewName, ViewQuery q, ViewReader.DocAttachments atts) {
        DesignDoc ddoc = designs.get(db, ddocId);
        int viewId = ddoc.viewIndex(viewName);
        if (viewId < 0) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        DesignDoc.View view = ddoc.views().get(viewId);
        ViewQuery.Plan plan = q.validate(view.reduce() != null);
        q.checkRange(view.collation());
        checkPartition(db, ddoc, q);
        ViewReader reader = new ViewReader(view.collation());
        Sequence seq = interactive.ready(db, ddoc) ? IndexBuilds.dbSeq(db)
                : q.update() == ViewQuery.Update.TRUE ? builds.refresh(db, ddoc) : IndexBuilds.currentSeq(db, ddoc);
        String sig = ddoc.signature();
        if (!plan.reduce()) {
            long total = db.read(r -> MapIndexSubspace.rowCount(r.tx(), r.handle(), sig, viewId));
            long rowLimit = q.limit() == Long.MAX_VALUE ? 0 : q.skip() + q.limit();
            Iterator<ViewRow> rows = Views.skipLimit(reader.mapRows(db, sig, viewId, q, q.includeDocs(), rowLimit, atts), q.skip(), q.limit());
            long offset = reader.offset(db, sig, viewId, q, ddoc.reduceTrees()) + q.skip();
            return new Result(false, total, Math.min(offset, total), seq, lazyUpdate(rows, q, db, ddoc), null);
        }
        ReduceProgram program = view.builtinReduce() ? null : programs.reduceProgram(ddoc, view);
        Reducer<?> reducer = program == null ? BuiltinReducers.of(view.reduce()) : Views.jsReducer(program, 0);
        Iterator<ViewRow> rows;
        if (ddoc.reduceTrees() && reader.hasTree(db, sig, viewId)) {
            // O(log n) tree entries per group, whatever its size.
            rows = reader.treeGroups(db, sig, viewId, reducer, q, plan.groupLevel());
        } else if (q.keys() != null) {
            // The tree is being built: reduce the rows as they stream by.
            List<Iterator<ViewRow>> groups = new ArrayList<>();
            for (Iterator<TreeReducer.Row> one : reader.rowsPerKey(db, sig, viewId, q)) {
                groups.add(Views.reduce(one, reducer, plan.groupLevel(), q.descending(), view.collation()));
            }
            rows = Views.concat(groups);
        } else {
            rows = Views.reduce(reader.reduceRows(db, sig, viewId, q), reducer, plan.groupLevel(), q.descending(), view.collation());
        }
        return new Result(true, null, null, seq, lazyUpdate(Views.skipLimit(rows, q.skip(), q.limit()), q, db, ddoc), program);
    }

    /**
     * Makes the design document's indexes ready for a read that is not a view query (Mango's
     * {@code _find}): an interactive index is always current once its background build is done;
     * another is brought up to date when {@code update}, else read as it is.
     */
    @Override
    public void prepare(Database db, DesignDoc ddoc, boolean update) {
        if (!interactive.ready(db, ddoc) && update) builds.refresh(db, ddoc);
    }

    /** {@code update=lazy}: answer from the index as it is, then bring it up to date. */
    private Iterator<ViewRow> lazyUpdate(Iterator<ViewRow> rows, ViewQuery q, Database db, DesignDoc ddoc) {
        if (q.update() != ViewQuery.Update.LAZY) return rows;
        return Views.onExhausted(rows, () -> Thread.ofVirtual().name("view-update-after").start(() -> {
            try {
                builds.refresh(db, ddoc);
            } catch (RuntimeException e) {
                log.warn("update after a query of {} in {} failed", ddoc.id(), db.name(), e);
            }
        }));
    }
}
