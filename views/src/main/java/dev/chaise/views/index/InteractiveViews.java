package dev.chaise.views.index;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.ByDesignStamp;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.DocumentWriteHook;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.EditBranch;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.MapProgram;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * RFC E's interactive views: indexes a document inside its own transaction, through storage's
 * write hook. Saving a design document with {@code options.interactive} records the index's
 * definition, its creation versionstamp (this transaction's) and status {@code building}; a
 * background build covers the changes up to that versionstamp, and every later write indexes
 * itself here.
 */
public final class InteractiveViews implements DocumentWriteHook {
    private static final Logger log = LoggerFactory.getLogger(InteractiveViews.class);

    /** Opens a design document's map program on this thread, or gives null when none can run here. */
    public interface Programs {
        MapProgram open(DesignDoc ddoc);
    }

    private final Programs programs;
    private final Reductions reductions;
    private final ReduceTree.Order order;
    /** Definitions read once per transaction: a bulk write runs the hook per document. */
    private final Map<Transaction, List<MapIndexSubspace.Definition>> perTransaction = new WeakHashMap<>();
    /**
     * Each database's definitions, read again only after a design document write: a write needs
     * no range read of them (1.7 % of a PUT's samples, issue 27); an index created concurrently
     * still conflicts.
     */
    private final ByDesignStamp<List<MapIndexSubspace.Definition>> byDatabase = new ByDesignStamp<>();

    /** @param programs JavaScript for JavaScript design documents, Java for Mango's (dev.chaise.views.IndexPrograms) */
    public InteractiveViews(Programs programs) {
        this(programs, Reductions.COUNTS, ReduceTree.Order.DEFAULT);
    }

    /**
     * @param programs JavaScript for JavaScript design documents, Java for Mango's (dev.chaise.views.IndexPrograms)
     * @param reductions each view's reduce function, for the trees writes keep current
     * @param order the fan-out of the trees made for new interactive indexes
     */
    public InteractiveViews(Programs programs, Reductions reductions, ReduceTree.Order order) {
        this.programs = programs;
        this.reductions = reductions;
        this.order = order;
    }

    @Override
    public void onWrite(Transaction tx, Change c) {
        if (c.docId().startsWith(DocumentJson.DESIGN_PREFIX) && designWritten(tx, c)) {
            List<MapIndexSubspace.Definition> own = MapIndexSubspace.definitions(tx, c.db()); // this transaction's own: never cached
            synchronized (perTransaction) {
                perTransaction.put(tx, own); // later documents of this transaction see the new definitions
            }
        }
        // A losing branch that changed still re-maps the winner: map functions see _conflicts.
        List<MapIndexSubspace.Definition> defs;
        synchronized (perTransaction) {
            defs = perTransaction.computeIfAbsent(tx, t -> definitions(t, c.db()));
        }
        ObjectNode[] doc = {null}; // the document as map functions see it: read and rendered once for every index
        for (MapIndexSubspace.Definition d : defs) index(tx, c, d, doc);
    }

    /** {@code db}'s definitions at {@code tx}'s version, whose handle {@code db} was read in {@code tx}: cached while its entry is the same. */
    private List<MapIndexSubspace.Definition> definitions(Transaction tx, DbHandle db) {
        return byDatabase.get(db, () -> List.copyOf(MapIndexSubspace.definitions(tx, db)));
    }

    /** Parsed definitions by signature: a signature names one definition, and a bulk write would parse it per document. */
    private final Map<String, DesignDoc> parsed = new java.util.concurrent.ConcurrentHashMap<>();

    private void index(Transaction tx, Change c, MapIndexSubspace.Definition d, ObjectNode[] docOnce) {
        DesignDoc ddoc = parsed.get(d.sig());
        if (ddoc == null) {
            try {
                ddoc = DesignDoc.parse(d.ddocId(), Json.MAPPER.readTree(d.json()));
            } catch (JsonProcessingException | ViewException e) {
                log.warn("interactive index {} of {} has an unreadable definition", d.sig(), d.ddocId(), e);
                return;
            }
            if (parsed.size() > 1000) parsed.clear();
            parsed.put(d.sig(), ddoc);
        }
        boolean design = c.docId().startsWith(DocumentJson.DESIGN_PREFIX);
        if (c.newDeleted() || (design && !ddoc.includeDesign())) {
            try (Reductions.Opened reducers = reductions.open(ddoc)) {
                ViewIndexer.indexDoc(tx, c.db(), ddoc, c.docId(), c.newWinner().toString(), null, reducers);
            }
            return;
        }
        if (docOnce[0] == null) docOnce[0] = mapDoc(c);
        ObjectNode doc = docOnce[0];
        MapProgram opened;
        try {
            opened = programs.open(ddoc);
        } catch (ViewException e) {
            log.warn("interactive index {} of {} does not compile: {}", d.sig(), d.ddocId(), e.reason());
            return;
        }
        if (opened == null) return;
        try (MapProgram program = opened; Reductions.Opened reducers = reductions.open(ddoc)) {
            List<dev.chaise.views.js.MapOutcome> outcomes = program.map(doc);
            for (dev.chaise.views.js.MapOutcome o : outcomes) {
                if (o instanceof dev.chaise.views.js.MapOutcome.Failed f && JsEngine.stoppedByEngine(f.error())) {
                    throw new ViewException(ViewException.Kind.OS_PROCESS_ERROR, "interactive view of " + ddoc.id() + ": " + f.reason());
                }
            }
            // A document that never existed has no rows yet: no read of its old ones (a range read per index).
            ViewIndexer.indexDoc(tx, c.db(), ddoc, c.docId(), c.newWinner().toString(), outcomes, c.oldWinner() == null, reducers);
        }
    }

    private static ObjectNode mapDoc(Change c) {
        ObjectNode body = c.newBody() != null ? c.newBody() : c.reader().body(c.docId(), c.newWinner());
        // The winner's revision record holds a versionstamp this transaction cannot read back (FDB
        // raises 1036 on reading it): read its body alone, and the other branches around it. A new
        // document has no other branch, so nothing to read.
        List<EditBranch> branches = c.oldWinner() == null ? new ArrayList<>()
                : new ArrayList<>(c.reader().branchesBeside(c.docId(), c.newWinner()));
        branches.add(new EditBranch(c.newWinner(), false, List.of()));
        return ViewIndexer.mapDoc(new StoredDoc(c.docId(), c.newWinner(), false, body, branches, null));
    }

    /**
     * A design document changed: an interactive definition it no longer has stops being
     * maintained (its rows stay until {@code _view_cleanup}); a new one is registered. False if
     * its winner did not change (nor, then, any definition).
     */
    private boolean designWritten(Transaction tx, Change c) {
        DbHandle db = c.db();
        boolean sameWinner = c.oldWinner() != null && c.oldWinner().equals(c.newWinner()) && c.oldDeleted() == c.newDeleted();
        if (sameWinner) return false; // a losing branch changed: the definition did not
        ObjectNode body = c.newDeleted() ? null
                : c.newBody() != null ? c.newBody() : c.reader().get(c.docId(), c.newWinner(), false).body();
        DesignDoc now = null;
        if (body != null) {
            try {
                now = DesignDoc.parse(c.docId(), body);
            } catch (ViewException e) {
                now = null; // validated before the write; a replicated one may still be odd
            }
        }
        for (MapIndexSubspace.Definition d : MapIndexSubspace.definitions(tx, db)) {
            if (d.ddocId().equals(c.docId()) && (now == null || !now.interactive() || !now.signature().equals(d.sig()))) {
                MapIndexSubspace.clearDefinition(tx, db, d.sig());
            }
        }
        if (now == null || !now.interactive() || now.views().isEmpty()) return true;
        String sig = now.signature();
        if (MapIndexSubspace.creationSeq(tx, db, sig) == null) {
            MapIndexSubspace.setCreationSeqToThisTransaction(tx, db, sig);
            MapIndexSubspace.setBuildStatus(tx, db, sig, MapIndexSubspace.BUILDING);
            // Writes from now on and the background build keep the trees current, from empty.
            if (now.reduceTrees()) {
                for (int v = 0; v < now.views().size(); v++) ViewIndexer.tree(db, now, v, null).create(tx, order);
            }
        }
        MapIndexSubspace.setDefinition(tx, db, sig, c.docId(), Json.write(body));
        return true;
    }
}
