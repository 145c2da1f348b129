package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.InteractiveViews;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ReduceTree;
import dev.chaise.views.index.Reductions;
import dev.chaise.views.index.TreeReducer;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.index.ViewIndexer;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.jobs.JobWorkerPool;
import java.time.Duration;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.views.js.FilterProgram;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.validate.ValidateDocUpdate;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapProgram;
import dev.chaise.views.js.ReduceProgram;
import dev.chaise.views.query.BuiltinReducers;
import dev.chaise.views.query.Reducer;
import dev.chaise.views.query.ViewQuery;
import dev.chaise.views.query.ViewReader;
import dev.chaise.views.query.ViewRow;
import dev.chaise.views.query.Views;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Map indexes for the HTTP layer: reads design documents, keeps their indexes up to date (RFC E)
 * and answers queries. Depends on storage only; storage never calls back, except through the
 * write hook interactive views register.
 */
public final class ViewService implements AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ViewService.class);
    private final Storage storage;
    private final JsEngine js;
    private final ValidateDocUpdate validation;
    private final ViewIndexer indexer;
    private final ViewReader reader;
    private final ConcurrentHashMap<String, ReentrantLock> building = new ConcurrentHashMap<>();
    private final ActiveTasks tasks = new ActiveTasks();
    private final int workers;
    private final ReduceTree.Order treeOrder;

    /**
     * @param workers threads for a first build; {@code segmentDocs} changes each one takes at a time
     * @param treeOrder the fan-out of the reduce trees new indexes get
     */
    public record Options(int workers, int segmentDocs, ReduceTree.Order treeOrder) {
        public Options(int workers, int segmentDocs) {
            this(workers, segmentDocs, ReduceTree.Order.DEFAULT);
        }

        public static Options defaults() {
            return new Options(Runtime.getRuntime().availableProcessors(), ViewIndexer.SEGMENT_DOCS);
        }
    }

    public ViewService(Storage storage, JsEngine js) {
        this(storage, js, Options.defaults());
    }

    public ViewService(Storage storage, JsEngine js, Options options) {
        this.workers = options.workers();
        this.storage = storage;
        this.js = js;
        this.validation = new ValidateDocUpdate(js);
        this.treeOrder = options.treeOrder();
        this.indexer = new ViewIndexer(options.segmentDocs(), this::reducers, treeOrder);
        this.reader = new ViewReader();
        storage.addPurgeHook(new dev.chaise.views.index.PurgedDocs(this::reducers)); // purged documents leave every index with the purge
    }

    /** CouchDB's validate_doc_update for a write made by {@code name} (null: anonymous) with {@code roles}. */
    public dev.chaise.storage.DocumentValidator validator(String name, List<String> roles) {
        return validation.forUser(name, roles);
    }

    /**
     * Registers RFC E's interactive views with storage: from now on, documents written to a
     * database index themselves into its interactive indexes, in their own transactions.
     */
    public ViewService enableInteractiveViews() {
        // Mango's indexes need no JavaScript engine; JavaScript ones without an engine are not maintained.
        storage.addWriteHook(new InteractiveViews(ddoc -> js == null && !DesignDoc.QUERY.equals(ddoc.language()) ? null : mapProgram(ddoc),
                this::reducers, treeOrder));
        return this;
    }

    // ---------------------------------------------------------------- autoupdate

    private final java.util.Set<String> dirty = ConcurrentHashMap.newKeySet();
    private java.util.concurrent.ScheduledExecutorService autoUpdater;

    /**
     * Keeps indexes current without queries, as CouchDB's background indexer (ken) does: a write to
     * a database marks it, and every {@code delay} the marked databases' design documents with
     * {@code autoupdate} (the default) get their indexes brought up to date: as build jobs when
     * builds run on the job queue, else on this updater's thread. {@code autoupdate: false} leaves
     * an index to be built by the next query that wants it.
     */
    public ViewService enableAutoUpdate(Duration delay) {
        storage.addWriteHook((tx, change) -> dirty.add(change.db().name())); // a write that then fails only costs a check
        autoUpdater = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("view-autoupdate").daemon().factory());
        autoUpdater.scheduleWithFixedDelay(() -> {
            try {
                autoUpdateOnce();
            } catch (RuntimeException e) {
                log.warn("view autoupdate", e);
            }
        }, delay.toMillis(), delay.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        return this;
    }

    /** One pass over the databases written since the last: what the updater runs on its delay. */
    public void autoUpdateOnce() {
        List<String> dbs = new ArrayList<>(dirty);
        dirty.removeAll(dbs);
        for (String dbName : dbs) {
            Database db;
            List<String> ids;
            try {
                db = storage.open(dbName);
                ids = designDocIds(db);
            } catch (StorageException e) {
                continue; // deleted since
            }
            for (String id : ids) {
                try {
                    DesignDoc ddoc = designDoc(db, id);
                    if (!ddoc.autoupdate() || ddoc.views().isEmpty()) continue;
                    if (jobs != null) requestBuild(db, ddoc);
                    else refresh(db, ddoc);
                } catch (StorageException | ViewException e) {
                    // deleted since, or not a valid index definition: its query will say why
                }
            }
        }
    }

    /** Adds the index's build job unless it is current; does not wait for it. */
    private void requestBuild(Database db, DesignDoc ddoc) {
        boolean behind = db.read(r -> {
            Sequence target = r.updateSeq();
            Sequence now = MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature());
            return target != null && (now == null || now.compareTo(target) < 0);
        });
        if (behind) jobs.add(JOB_TYPE, jobId(db, ddoc), jobData(db, ddoc));
    }

    private static String jobId(Database db, DesignDoc ddoc) {
        return db.handle().id() + "/" + ddoc.signature();
    }

    private static ObjectNode jobData(Database db, DesignDoc ddoc) {
        return dev.chaise.storage.json.Json.NODES.objectNode().put("db", db.name()).put("ddoc", ddoc.id()).put("sig", ddoc.signature());
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

    /** {@code GET /{db}/_design/{ddoc}/_info}'s view_index. */
    public record IndexInfo(String signature, String language, long sizeActive, long sizeExternal, Sequence updateSeq,
                            boolean updaterRunning, Sequence dbSeq) {}

    /** The design document {@code _design/name}; 404 {@code missing}/{@code deleted} as for any document. */
    public DesignDoc designDoc(Database db, String ddocId) {
        // One point read names the winning revision; parsing and the signature's md5 are done once per revision.
        record Key(long db, String id, String rev) {}
        DocInfo w = db.winner(ddocId);
        if (w == null) throw StorageException.notFound("missing");
        if (w.deleted()) throw StorageException.notFound("deleted");
        Key k = new Key(db.handle().id(), ddocId, w.rev().toString());
        DesignDoc cached = designs.get(k);
        if (cached != null) return cached;
        var d = db.get(ddocId, w.rev(), false);
        DesignDoc parsed = DesignDoc.parse(ddocId, d.body());
        if (designs.size() > 1000) designs.clear();
        designs.put(k, parsed);
        return parsed;
    }

    private final ConcurrentHashMap<Object, DesignDoc> designs = new ConcurrentHashMap<>();

    /**
     * What CouchDB checks of a design document before saving it ({@code couch_mrview:validate}):
     * its index definitions parse (400 {@code invalid_design_doc}), and, for JavaScript, every
     * view's map function and JavaScript reduce compiles (400 {@code compilation_error} with the
     * engine's message). Filters and {@code validate_doc_update} are compiled when they are used,
     * as in CouchDB. Another language is saved unchecked, as CouchDB saves it.
     */
    public void checkDesign(String ddocId, JsonNode body) {
        DesignDoc d = DesignDoc.parse(ddocId, body);
        if (js == null || !"javascript".equals(d.language())) return;
        for (DesignDoc.View v : d.views()) {
            checkCompiles("map", v.name(), v.map());
            if (v.reduce() != null && !v.builtinReduce()) checkCompiles("reduce", v.name(), v.reduce());
        }
    }

    private void checkCompiles(String type, String view, String source) {
        try {
            js.checkCompiles(source);
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, "compilation_error",
                    "Compilation of the " + type + " function in the '" + view + "' view failed: " + e.reason());
        }
    }

    /** Brings the design document's indexes up to the database's current update seq. */
    public Sequence refresh(Database db, DesignDoc ddoc) {
        record Seqs(Sequence target, Sequence now) {}
        Seqs q = db.read(r -> new Seqs(r.updateSeq(), MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature())));
        Sequence target = q.target();
        Sequence now = q.now();
        if (target == null || (now != null && now.compareTo(target) >= 0)) {
            if (now != null && !ddoc.interactive()) completeTrees(db, ddoc, now);
            return now;
        }
        if (jobs != null) return buildAsJob(db, ddoc, target);
        ReentrantLock lock = building.computeIfAbsent(jobId(db, ddoc), k -> new ReentrantLock());
        lock.lock();
        try {
            return build(db, ddoc, target, null);
        } finally {
            lock.unlock();
        }
    }

    /** A current index whose trees were not all loaded (a build cut short after its last batch) gets them now. */
    private void completeTrees(Database db, DesignDoc ddoc, Sequence now) {
        if (!indexer.treesMissing(db, ddoc)) return;
        ReentrantLock lock = building.computeIfAbsent(jobId(db, ddoc), k -> new ReentrantLock());
        lock.lock();
        try {
            indexer.ensureTrees(db, ddoc, now);
        } finally {
            lock.unlock();
        }
    }

    /** One build up to {@code target}; {@code progress} hears every committed batch (the job's proof of life). */
    private Sequence build(Database db, DesignDoc ddoc, Sequence target, Runnable progress) {
        Sequence from = currentSeq(db, ddoc);
        if (from != null && from.compareTo(target) >= 0) return from; // built while we waited
        // A first build covers one changes row per document: the counters say how many, no scan needed.
        long total;
        if (from == null) {
            var info = db.info();
            total = info.docCount() + info.docDelCount();
        } else {
            total = indexer.countChanges(db, from, target);
        }
        ActiveTasks.Task task = tasks.start(db.name(), ddoc.id(), total);
        ViewIndexer.Progress p = (n, s) -> {
            task.done(n);
            if (progress != null) progress.run();
        };
        try {
            if (from == null && workers > 1) {
                // A first build of a large database: every worker takes segments of the feed.
                indexer.buildParallel(db, ddoc, () -> mapProgram(ddoc), target, workers, p);
            }
            try (MapProgram program = mapProgram(ddoc)) {
                return indexer.update(db, ddoc, program, target, p);
            }
        } finally {
            tasks.end(task);
        }
    }

    // ---------------------------------------------------------------- builds as jobs

    static final String JOB_TYPE = "views";
    private JobQueue jobs;
    private JobWorkerPool pool;

    /**
     * Builds run as jobs of the KV queue from now on, taken by {@code builders} threads here and by
     * any other server on the same cluster; a query adds the index's job and waits for it.
     */
    public ViewService useJobQueue(JobQueue queue, int builders, Duration activityTimeout) {
        this.jobs = queue;
        this.pool = new JobWorkerPool(queue, JOB_TYPE, builders, activityTimeout, this::runJob);
        return this;
    }

    private Sequence buildAsJob(Database db, DesignDoc ddoc, Sequence target) {
        String jobId = jobId(db, ddoc);
        jobs.add(JOB_TYPE, jobId, jobData(db, ddoc));
        JobQueue.Job done = jobs.awaitState(JOB_TYPE, jobId, JobQueue.State.FINISHED, Duration.ofDays(1)).orElseThrow();
        JsonNode err = done.data().get("error");
        if (err != null) {
            String kind = done.data().path("kind").asText("");
            if (kind.equals("storage")) throw new StorageException(StorageException.Kind.valueOf(done.data().path("storage_kind").asText()), done.data().path("reason").asText());
            throw new ViewException(kind.isEmpty() ? ViewException.Kind.COMPILATION_ERROR : ViewException.Kind.valueOf(kind),
                    err.asText(), done.data().path("reason").asText());
        }
        return currentSeq(db, ddoc);
    }

    /** A worker's side of a build job: up to the database's sequence now, which covers every waiter that added the job before. */
    private JsonNode runJob(JobQueue queue, JobQueue.Lease lease) {
        String dbName = lease.data().get("db").asText();
        ObjectNode result = dev.chaise.storage.json.Json.NODES.objectNode();
        try {
            Database db = storage.open(dbName);
            DesignDoc ddoc = designDoc(db, lease.data().get("ddoc").asText());
            if (!ddoc.signature().equals(lease.data().get("sig").asText())) return result.put("superseded", true);
            Sequence target = dbSeq(db);
            if (target == null) return result;
            long[] batches = {0};
            build(db, ddoc, target, () -> {
                if (++batches[0] % 4 == 0) queue.update(lease, lease.data()); // proof of life, a few per second
            });
            return result.put("update_seq", target.toHex());
        } catch (ViewException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("kind", e.kind().name());
        } catch (StorageException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("kind", "storage").put("storage_kind", e.kind().name());
        }
    }

    /** Stops this server's build workers (jobs they held are taken over after the activity timeout). */
    @Override
    public void close() {
        if (autoUpdater != null) autoUpdater.shutdownNow();
        if (pool != null) pool.close();
    }

    /** Index builds since start: the view-build metrics. */
    public ActiveTasks.Totals buildTotals() {
        return tasks.totals();
    }

    /** Index builds running now, for {@code _active_tasks}. */
    public List<ActiveTasks.Info> activeTasks() {
        return tasks.list();
    }

    private MapProgram mapProgram(DesignDoc ddoc) {
        if (DesignDoc.QUERY.equals(ddoc.language())) return mangoProgram(ddoc); // Mango's JSON indexes, in Java
        if (js == null) throw new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
        if (!"javascript".equals(ddoc.language())) {
            throw new ViewException(ViewException.Kind.INVALID_DESIGN_DOC, "unknown_query_language", ddoc.language());
        }
        try {
            return js.mapProgram(new JsEngine.MapSource(ddoc.id(), ddoc.maps(), ddoc.lib()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
    }

    /** Mango's map programs are stateless: one per signature serves every thread and every write. */
    private final ConcurrentHashMap<String, MapProgram> mangoPrograms = new ConcurrentHashMap<>();

    private MapProgram mangoProgram(DesignDoc ddoc) {
        if (mangoPrograms.size() > 1000) mangoPrograms.clear();
        return mangoPrograms.computeIfAbsent(ddoc.signature(), k -> new dev.chaise.views.mango.MangoMapProgram(ddoc));
    }

    /**
     * The reduce function of each view of {@code ddoc}, for the index's trees: built-ins at once,
     * JavaScript programs when first asked for, on the calling thread, closed with the result.
     */
    private Reductions.Opened reducers(DesignDoc ddoc) {
        return new Reductions.Opened() {
            final ReduceProgram[] programs = new ReduceProgram[ddoc.views().size()];

            @Override
            public TreeReducer<?> of(int viewId) {
                DesignDoc.View v = ddoc.views().get(viewId);
                if (v.reduce() == null) return null;
                if (v.builtinReduce()) return BuiltinReducers.of(v.reduce());
                if (programs[viewId] == null) programs[viewId] = reduceProgram(ddoc, v);
                return Views.jsReducer(programs[viewId], 0);
            }

            @Override
            public void close() {
                for (ReduceProgram p : programs) if (p != null) p.close();
            }
        };
    }

    /** Runs a view query: updates the index as {@code update} asks, then streams the rows. */
    public Result query(Database db, String ddocId, String viewName, ViewQuery q) {
        return query(db, ddocId, viewName, q, false);
    }

    /** @param attachments with {@code include_docs}: attachment bodies inline, as {@code attachments=true} asks */
    public Result query(Database db, String ddocId, String viewName, ViewQuery q, boolean attachments) {
        DesignDoc ddoc = designDoc(db, ddocId);
        int viewId = ddoc.viewIndex(viewName);
        if (viewId < 0) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        DesignDoc.View view = ddoc.views().get(viewId);
        ViewQuery.Plan plan = q.validate(view.reduce() != null);
        q.checkRange();
        Sequence seq = interactiveReady(db, ddoc) ? dbSeq(db)
                : q.update() == ViewQuery.Update.TRUE ? refresh(db, ddoc) : currentSeq(db, ddoc);
        String sig = ddoc.signature();
        if (!plan.reduce()) {
            long total = db.read(r -> MapIndexSubspace.rowCount(r.tx(), r.handle(), sig, viewId));
            long rowLimit = q.limit() == Long.MAX_VALUE ? 0 : q.skip() + q.limit();
            Iterator<ViewRow> rows = Views.skipLimit(reader.mapRows(db, sig, viewId, q, q.includeDocs(), rowLimit, attachments), q.skip(), q.limit());
            long offset = reader.offset(db, sig, viewId, q, ddoc.reduceTrees()) + q.skip();
            return new Result(false, total, Math.min(offset, total), seq, lazyUpdate(rows, q, db, ddoc), null);
        }
        ReduceProgram program = view.builtinReduce() ? null : reduceProgram(ddoc, view);
        Reducer<?> reducer = program == null ? BuiltinReducers.of(view.reduce()) : Views.jsReducer(program, 0);
        Iterator<ViewRow> rows;
        if (ddoc.reduceTrees() && reader.hasTree(db, sig, viewId)) {
            // O(log n) tree entries per group, whatever its size.
            rows = reader.treeGroups(db, sig, viewId, reducer, q, plan.groupLevel());
        } else if (q.keys() != null) {
            // The tree is being built: reduce the rows as they stream by.
            List<Iterator<ViewRow>> groups = new ArrayList<>();
            for (Iterator<TreeReducer.Row> one : reader.rowsPerKey(db, sig, viewId, q)) {
                groups.add(Views.reduce(one, reducer, plan.groupLevel(), q.descending()));
            }
            rows = Views.concat(groups);
        } else {
            rows = Views.reduce(reader.reduceRows(db, sig, viewId, q), reducer, plan.groupLevel(), q.descending());
        }
        return new Result(true, null, null, seq, lazyUpdate(Views.skipLimit(rows, q.skip(), q.limit()), q, db, ddoc), program);
    }

    /**
     * Makes the design document's indexes ready for a read that is not a view query (Mango's
     * {@code _find}): an interactive index is always current once its background build is done;
     * another is brought up to date when {@code update}, else read as it is.
     */
    public void prepare(Database db, DesignDoc ddoc, boolean update) {
        if (!interactiveReady(db, ddoc) && update) refresh(db, ddoc);
    }

    /** {@code update=lazy}: answer from the index as it is, then bring it up to date. */
    private Iterator<ViewRow> lazyUpdate(Iterator<ViewRow> rows, ViewQuery q, Database db, DesignDoc ddoc) {
        if (q.update() != ViewQuery.Update.LAZY) return rows;
        return Views.onExhausted(rows, () -> Thread.ofVirtual().name("view-update-after").start(() -> {
            try {
                refresh(db, ddoc);
            } catch (RuntimeException e) {
                log.warn("update after a query of {} in {} failed", ddoc.id(), db.name(), e);
            }
        }));
    }

    /**
     * An interactive index answers from its rows once its background build has reached the
     * creation versionstamp; a query before that waits for (runs) the build, as RFC E says.
     * False for an index that is not interactive, or was saved before interactive views were on.
     */
    private boolean interactiveReady(Database db, DesignDoc ddoc) {
        if (!ddoc.interactive()) return false;
        String sig = ddoc.signature();
        record State(String status, Sequence creation) {}
        State st = db.read(r -> new State(MapIndexSubspace.buildStatus(r.tx(), r.handle(), sig), MapIndexSubspace.creationSeq(r.tx(), r.handle(), sig)));
        if (st.status() == null || st.creation() == null) return false;
        if (st.status().equals(MapIndexSubspace.READY)) return true;
        ReentrantLock lock = building.computeIfAbsent(jobId(db, ddoc), k -> new ReentrantLock());
        lock.lock();
        try {
            try (MapProgram program = mapProgram(ddoc)) {
                indexer.update(db, ddoc, program, st.creation(), true, null);
            }
            db.run((tx, h) -> {
                MapIndexSubspace.setUpdateSeq(tx, h, sig, st.creation());
                MapIndexSubspace.setBuildStatus(tx, h, sig, MapIndexSubspace.READY);
                return null;
            });
        } finally {
            lock.unlock();
        }
        return true;
    }

    private static Sequence dbSeq(Database db) {
        return db.read(r -> r.updateSeq());
    }

    private static Sequence currentSeq(Database db, DesignDoc ddoc) {
        return db.read(r -> MapIndexSubspace.updateSeq(r.tx(), r.handle(), ddoc.signature()));
    }

    private ReduceProgram reduceProgram(DesignDoc ddoc, DesignDoc.View view) {
        if (js == null) throw new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
        try {
            return js.reduceProgram(new JsEngine.ReduceSource(ddoc.id(), List.of(view.reduce()), ddoc.lib()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
    }

    /** A test on documents for {@code _changes}; holds a pooled engine context, so close it on the thread that used it. */
    public interface DocFilter extends AutoCloseable {
        boolean test(ObjectNode doc);

        @Override
        void close();
    }

    /**
     * {@code filter=ddoc/name}: the design document's {@code filters[name](doc, req)}. Opens a
     * program on the calling thread.
     */
    public DocFilter filterFunction(Database db, String ddocId, String name, JsonNode req) {
        if (js == null) throw new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
        JsonNode ddoc = db.get(ddocId, null, false).body();
        FilterProgram p;
        try {
            p = js.filterProgram(new JsEngine.DesignSource(ddocId, ddoc));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.FUNCTION_COMPILATION_ERROR, e.error(), e.reason());
        }
        try {
            p.compile(name);
        } catch (JsFunctionException e) {
            p.close();
            throw new ViewException(ViewException.Kind.FUNCTION_COMPILATION_ERROR, e.error(), e.reason());
        }
        return new DocFilter() {
            @Override
            public boolean test(ObjectNode doc) {
                try {
                    return p.filter(name, dev.chaise.storage.json.Json.write(doc), req);
                } catch (JsFunctionException e) {
                    throw new ViewException(ViewException.Kind.FILTER_ERROR, e.error(), e.reason());
                }
            }

            @Override
            public void close() {
                p.close();
            }
        };
    }

    /** {@code filter=_view}: documents for which the view's map function emits at least one row. */
    public DocFilter viewFilter(Database db, String ddocId, String viewName) {
        DesignDoc ddoc = designDoc(db, ddocId);
        DesignDoc.View view = ddoc.view(viewName);
        if (view == null) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        MapProgram p;
        try {
            if (js == null) throw new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
            p = js.mapProgram(new JsEngine.MapSource(ddocId, List.of(view.map()), ddoc.lib()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
        return new DocFilter() {
            @Override
            public boolean test(ObjectNode doc) {
                return p.map(doc).getFirst() instanceof dev.chaise.views.js.MapOutcome.Rows r && !r.rows().isEmpty();
            }

            @Override
            public void close() {
                p.close();
            }
        };
    }


    /** The view index's info for {@code _info}. */
    public IndexInfo info(Database db, String ddocId) {
        DesignDoc ddoc = designDoc(db, ddocId);
        String sig = ddoc.signature();
        ReentrantLock l = building.get(jobId(db, ddoc));
        IndexInfo info = db.read(r -> {
            long size = 0;
            for (int v = 0; v < ddoc.views().size(); v++) size += MapIndexSubspace.kvSize(r.tx(), r.handle(), sig, v);
            return new IndexInfo(sig, ddoc.language(), size, size, MapIndexSubspace.updateSeq(r.tx(), r.handle(), sig), l != null && l.isLocked(),
                    r.updateSeq());
        });
        if (jobs != null && !info.updaterRunning()) {
            // Builds run as jobs, on this server or another: running means the index's job is.
            boolean running = jobs.get(JOB_TYPE, jobId(db, ddoc)).map(j -> j.state() == JobQueue.State.RUNNING).orElse(false);
            return new IndexInfo(info.signature(), info.language(), info.sizeActive(), info.sizeExternal(), info.updateSeq(), running, info.dbSeq());
        }
        return info;
    }

    /** The ids of the database's live design documents. */
    private static List<String> designDocIds(Database db) {
        List<String> ids = new ArrayList<>();
        var range = new Database.IdRange(DocumentJson.DESIGN_PREFIX, DocumentJson.DESIGN_END, false);
        db.allDocs(range, ScanProperties.FORWARD, null, (r, row) -> row.id()).forEachRemaining(ids::add);
        return ids;
    }

    /** {@code _view_cleanup}: drops every index no live design document's signature names. */
    public void cleanup(Database db) {
        List<String> live = new ArrayList<>();
        for (String id : designDocIds(db)) {
            try {
                live.add(designDoc(db, id).signature());
            } catch (StorageException | ViewException e) {
                // deleted since, or not an index definition: it keeps nothing alive
            }
        }
        db.run((tx, h) -> { // after a 1021, clearing again is harmless
            for (String sig : MapIndexSubspace.signatures(tx, h)) {
                if (!live.contains(sig)) MapIndexSubspace.clear(tx, h, sig);
            }
            return null;
        });
    }

    /** Map errors stored for a view (beyond RFC E): doc id, rev and message, by doc id. */
    public List<MapIndexSubspace.MapError> errors(Database db, String ddocId, String viewName, int limit) {
        DesignDoc ddoc = designDoc(db, ddocId);
        int viewId = ddoc.viewIndex(viewName);
        if (viewId < 0) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        refresh(db, ddoc);
        return db.read(reader -> {
            DbHandle h = reader.handle();
            byte[][] r = MapIndexSubspace.errorRange(h, ddoc.signature(), viewId);
            List<MapIndexSubspace.MapError> out = new ArrayList<>();
            for (var row : reader.tx().getRangeAsList(r[0], r[1], limit, false)) out.add(MapIndexSubspace.decodeError(h, row));
            return out;
        });
    }

}
