package dev.chaise.views.search;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Change;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.PurgedInfos;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.jobs.JobWorkerPool;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import dev.chaise.storage.Partitions;
import dev.chaise.stats.Histogram;
import dev.chaise.stats.Stats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexNotFoundException;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;

/**
 * Owns Nouveau's indexes in this process: each one's {@link KvDirectory}, bringing it up to date
 * (as a job of the KV queue once {@link #useJobQueue} is called, else in the calling thread),
 * its searches ({@link SearchRunner}), {@code _nouveau_info} and {@code _nouveau_cleanup}.
 *
 * <p>An index is consistent with the documents' sequence recorded in its Lucene commit
 * ({@code update_seq}, with {@code purge_seq} and the field schema): the commit and that record
 * appear in one KV transaction, so a crash at any point resumes from the last commit. A build
 * first removes documents purged since the recorded purge seq, then reads the changes after the
 * update seq in snapshot batches, runs the index function over them in the engine, and replaces
 * or deletes each document; it commits every {@link #COMMIT_DOCS} changes or
 * {@link #COMMIT_MILLIS}. Design documents, deleted documents and documents the function gave
 * no field (or threw on) are left out, as Nouveau leaves them out.
 */
public final class SearchIndexes implements AutoCloseable {
    static final String JOB_TYPE = "nouveau";
    static final int COMMIT_DOCS = 20_000;
    static final long COMMIT_MILLIS = 10_000;
    /** How long a superseded commit's files stay for searches that still read it: far longer than a search takes. */
    static final long KEEP_COMMITS_MILLIS = 120_000;
    private static final int BATCH_DOCS = 500;
    private static final long BATCH_BYTES = 4_000_000;

    private final JsEngine js;
    private final BlockCache cache;
    private final BuildListener tasks;
    private final Storage storage;
    /** Default of {@code [nouveau] max_indexes_open}, as Nouveau's {@code maxIndexesOpen} bounds its open indexes. */
    public static final int MAX_INDEXES_OPEN = 100;
    /** The open indexes by database id and signature, least recently used first; guarded by itself. */
    private final LinkedHashMap<String, Index> indexes = new LinkedHashMap<>(16, 0.75f, true);
    private int maxOpen = MAX_INDEXES_OPEN;
    /** {@code [nouveau] enable}: when false, searches are not served and the background updater builds nothing. */
    private volatile boolean enabled = true;
    private final ConcurrentHashMap<String, ObjectNode> ddocBodies = new ConcurrentHashMap<>();
    private volatile JobQueue jobs;
    private JobWorkerPool pool;
    /** CouchDB's {@code nouveau.*} metrics (nouveau_httpd): whole searches, the wait for the index, searches running. */
    private final Histogram searchLatency, updateLatency;
    private final AtomicInteger activeSearches = new AtomicInteger();

    /** @param tasks hears builds; @param cacheBytes the block cache shared by every index */
    public SearchIndexes(Storage storage, JsEngine js, BuildListener tasks, long cacheBytes) {
        this.storage = storage;
        this.js = js;
        this.tasks = tasks;
        this.cache = new BlockCache(cacheBytes);
        Stats stats = storage.stats();
        this.searchLatency = stats.histogram("nouveau.search_latency", "milliseconds a _nouveau search took, the index's update included");
        this.updateLatency = stats.histogram("nouveau.update_latency", "milliseconds a _nouveau search waited for its index to be brought up to date");
        stats.gauge("nouveau.active_searches", "number of _nouveau searches running now", activeSearches::get);
    }

    /** Builds run as jobs of {@code queue} from now on, taken by {@code builders} threads here and by other servers. */
    public void useJobQueue(JobQueue queue, int builders, Duration activityTimeout) {
        this.jobs = queue;
        this.pool = new JobWorkerPool(queue, JOB_TYPE, builders, activityTimeout, this::runJob);
    }

    /**
     * One index of this process: its directory, its build lock, and the reader searches share.
     * Once {@link #close closed} (evicted from the open indexes) it keeps no reader: a search that
     * got it before gets a reader of its own, closed when that search releases it.
     */
    static final class Index {
        final KvDirectory dir;
        final ReentrantLock building = new ReentrantLock();
        /** Query parsers over the index's analyzers (a signature fixes them), reused: one costs more to make than a term query does to run. */
        final SearchRunner.Parsers parsers;
        private DirectoryReader reader;
        /** What the shared reader's commit records, read once per reader rather than per query. */
        private State state;
        private boolean closed;

        Index(KvDirectory dir, SearchIndexDef def) {
            this.dir = dir;
            this.parsers = new SearchRunner.Parsers(def);
        }

        /**
         * The reader searches share, reopened on the newest commit first when {@code reopen}
         * (a KV read of the file list), or null before the first commit. Release it with decRef.
         */
        synchronized DirectoryReader reader(boolean reopen) throws IOException {
            if (reader == null) {
                DirectoryReader r;
                try {
                    r = DirectoryReader.open(dir);
                } catch (IndexNotFoundException e) {
                    return null;
                }
                if (closed) return r; // its only reference is the caller's
                reader = r;
                state = State.of(r);
            } else if (reopen) {
                DirectoryReader newer = DirectoryReader.openIfChanged(reader);
                if (newer != null) {
                    reader.decRef();
                    reader = newer;
                    state = State.of(newer);
                }
            }
            reader.incRef();
            return reader;
        }

        /** Whether the shared reader already covers {@code seqs}: then a query needs no KV read of the index's files. */
        synchronized boolean readerCovers(Seqs seqs) {
            return reader != null && state.covers(seqs);
        }

        /** What {@code r}'s commit records: kept for the shared reader, read for another. */
        synchronized State stateOf(DirectoryReader r) throws IOException {
            return r == reader ? state : State.of(r);
        }

        /** Drops the shared reader (searches holding it finish first: it closes with their decRef). */
        synchronized void close() {
            closed = true;
            try {
                if (reader != null) reader.decRef();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                reader = null;
                state = null;
            }
        }

        synchronized boolean closed() {
            return closed;
        }
    }

    /** The database's update and purge seqs, read together. */
    record Seqs(Sequence update, Sequence purge) {
        static Seqs of(Database db) {
            return db.read(r -> new Seqs(r.updateSeq(), r.purgeSeq()));
        }
    }

    /** The open index of {@code def}, opened (and the least recently used one beyond the bound closed) if it was not. */
    Index index(Database db, SearchIndexDef def) {
        String key = db.handle().id() + "/" + def.sig();
        synchronized (indexes) {
            Index idx = indexes.get(key);
            if (idx == null) {
                idx = new Index(new KvDirectory(db, def.sig(), cache), def);
                indexes.put(key, idx);
                closeBeyondBound(key);
            }
            return idx;
        }
    }

    /**
     * Closes the least recently used indexes until no more than the bound are open, skipping any
     * a build holds (its writer must stay the only one on that directory) and {@code keep}.
     */
    private void closeBeyondBound(String keep) {
        for (var it = indexes.entrySet().iterator(); indexes.size() > maxOpen && it.hasNext(); ) {
            Map.Entry<String, Index> e = it.next();
            Index idx = e.getValue();
            if (e.getKey().equals(keep) || idx.building.isHeldByCurrentThread() || !idx.building.tryLock()) continue;
            try {
                idx.close(); // a build that waits for this lock sees it closed and takes the index anew
            } finally {
                idx.building.unlock();
            }
            it.remove();
        }
    }

    /** {@code [nouveau] max_indexes_open}: how many indexes keep a reader open here; beyond it the least recently used closes. */
    public void maxIndexesOpen(int n) {
        if (n < 1) throw new IllegalArgumentException("max_indexes_open must be at least 1");
        synchronized (indexes) {
            maxOpen = n;
            closeBeyondBound(null);
        }
    }

    /** {@code [nouveau] enable}, as CouchDB's {@code nouveau:enabled()}. */
    public void enable(boolean on) {
        enabled = on;
    }

    public boolean enabled() {
        return enabled;
    }

    /** How many indexes are open now. */
    int openIndexes() {
        synchronized (indexes) {
            return indexes.size();
        }
    }

    // ---------------------------------------------------------------- definitions

    /** The index {@code name} of the design document {@code ddocId}; 404 for a missing document or index. */
    public SearchIndexDef definition(Database db, String ddocId, String name) {
        return SearchIndexDef.parse(ddocId, ddocBody(db, ddocId), name);
    }

    private ObjectNode ddocBody(Database db, String ddocId) {
        DocInfo w = db.winner(ddocId);
        if (w == null) throw StorageException.notFound("missing");
        if (w.deleted()) throw StorageException.notFound("deleted");
        String key = db.handle().id() + "/" + ddocId + "/" + w.rev();
        ObjectNode body = ddocBodies.get(key);
        if (body != null) return body;
        body = db.get(ddocId, w.rev(), false).body();
        if (ddocBodies.size() > 1000) ddocBodies.clear();
        ddocBodies.put(key, body);
        return body;
    }

    // ---------------------------------------------------------------- building

    /** What a commit records. */
    record State(Sequence updateSeq, Sequence purgeSeq, IndexedFields.Schema schema) {
        static State of(DirectoryReader r) throws IOException {
            return of(r.getIndexCommit().getUserData());
        }

        static State of(Map<String, String> userData) {
            return new State(seq(userData.get("update_seq")), seq(userData.get("purge_seq")), IndexedFields.Schema.parse(userData.get("_schema")));
        }

        private static Sequence seq(String hex) {
            return hex == null || hex.isEmpty() ? null : Sequence.parse(hex);
        }

        boolean covers(Seqs s) {
            return Objects.equals(updateSeq, s.update()) && Objects.equals(purgeSeq, s.purge());
        }

        Map<String, String> userData() {
            return Map.of("update_seq", hex(updateSeq), "purge_seq", hex(purgeSeq), "_schema", schema.encode());
        }

        private static String hex(Sequence s) {
            return s == null ? "" : s.toHex();
        }
    }

    /** Brings the index up to the database's update seq now: a job when builds run as jobs, else here. */
    public void refresh(Database db, SearchIndexDef def) {
        refresh(db, def, Seqs.of(db));
    }

    /** @return whether the shared reader was current already (else it must be reopened) */
    private boolean refresh(Database db, SearchIndexDef def, Seqs seqs) {
        if (index(db, def).readerCovers(seqs)) return true;
        State now = committed(db, def);
        if (now != null && now.covers(seqs)) return false;
        if (jobs != null) buildAsJob(db, def);
        else build(db, def, null);
        return false;
    }

    /** Adds the index's build job if it is behind; false when builds do not run as jobs. */
    public boolean request(Database db, SearchIndexDef def) {
        JobQueue q = jobs;
        if (q == null) return false;
        State now = committed(db, def);
        Sequence target = db.read(r -> r.updateSeq());
        if (target != null && (now == null || !Objects.equals(now.updateSeq(), target))) q.add(JOB_TYPE, jobId(db, def), jobData(db, def));
        return true;
    }

    /** The background updater's pass over one design document: each of its Nouveau indexes brought up to date. */
    public void requestAll(Database db, String ddocId) {
        if (!enabled) return;
        ObjectNode body = ddocBody(db, ddocId);
        for (String name : SearchIndexDef.names(body)) {
            SearchIndexDef def = SearchIndexDef.parse(ddocId, body, name);
            if (!request(db, def)) refresh(db, def);
        }
    }

    /** The state of the index's last commit, or null before its first. */
    State committed(Database db, SearchIndexDef def) {
        try {
            DirectoryReader r = index(db, def).reader(true);
            if (r == null) return null;
            try {
                return State.of(r);
            } finally {
                r.decRef();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void buildAsJob(Database db, SearchIndexDef def) {
        String jobId = jobId(db, def);
        jobs.add(JOB_TYPE, jobId, jobData(db, def));
        JobQueue.Job done = jobs.awaitState(JOB_TYPE, jobId, JobQueue.State.FINISHED, Duration.ofDays(1)).orElseThrow();
        JsonNode err = done.data().get("error");
        if (err != null) throw new SearchException(done.data().path("status").asInt(500), err.asText(), done.data().path("reason").asText());
    }

    private JsonNode runJob(JobQueue queue, JobQueue.Lease lease) {
        ObjectNode result = Json.NODES.objectNode();
        try {
            Database db = storage.open(lease.data().get("db").asText());
            SearchIndexDef def = definition(db, lease.data().get("ddoc").asText(), lease.data().get("name").asText());
            if (!def.sig().equals(lease.data().get("sig").asText())) return result.put("superseded", true);
            long[] batches = {0};
            build(db, def, () -> {
                if (++batches[0] % 4 == 0) queue.update(lease, lease.data()); // proof of life
            });
            return result;
        } catch (SearchException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("status", e.status());
        } catch (StorageException e) {
            return result.put("error", e.error()).put("reason", e.reason()).put("status", e.kind() == StorageException.Kind.NOT_FOUND ? 404 : 500);
        }
    }

    private static String jobId(Database db, SearchIndexDef def) {
        return db.handle().id() + "/" + def.sig();
    }

    private static ObjectNode jobData(Database db, SearchIndexDef def) {
        return Json.NODES.objectNode().put("db", db.name()).put("ddoc", def.ddocId()).put("name", def.name()).put("sig", def.sig());
    }

    private record Pending(Change change, String docJson) {}

    /** One build up to the database's update seq as of its start; {@code progress} hears every batch. */
    void build(Database db, SearchIndexDef def, Runnable progress) {
        Index idx = index(db, def);
        idx.building.lock();
        while (idx.closed()) { // closed while this waited: the open one is another
            idx.building.unlock();
            idx = index(db, def);
            idx.building.lock();
        }
        IndexWriterConfig cfg = new IndexWriterConfig(Analyzers.of(def)).setCommitOnClose(false)
                .setIndexDeletionPolicy(new KeepRecentCommits(KEEP_COMMITS_MILLIS));
        try (IndexWriter w = new IndexWriter(idx.dir, cfg); MapProgram program = program(def)) {
            State s = stateOf(w);
            Sequence target = db.read(r -> r.updateSeq());
            Sequence dbPurge = db.read(r -> r.purgeSeq());
            Sequence from = s.updateSeq();
            Sequence purge = s.purgeSeq();
            IndexedFields.Schema schema = s.schema();
            if (from == null) {
                purge = dbPurge; // a new index starts from the documents as they are now
            } else if (!Objects.equals(purge, dbPurge)) {
                List<PurgedInfos.Info> infos = db.purgedInfos();
                boolean kept = purge == null ? infos.size() < db.purgedInfosLimit() : infos.stream().anyMatch(i -> i.seq().equals(s.purgeSeq()));
                if (kept) {
                    for (PurgedInfos.Info i : infos) if (s.purgeSeq() == null || i.seq().compareTo(s.purgeSeq()) > 0) w.deleteDocuments(new Term(IndexedFields.ID, i.id()));
                } else { // the records since the index's purge seq are gone: start over
                    w.deleteAll();
                    from = null;
                    schema = IndexedFields.Schema.parse("");
                }
                purge = dbPurge;
            }
            long total = from == null ? db.info().docCount() + db.info().docDelCount() : countChanges(db, from, target);
            BuildListener.Build task = tasks.started(db.name(), def.ddocId(), total);
            try {
                long sinceCommit = 0;
                long lastCommit = System.currentTimeMillis();
                while (target != null && (from == null || from.compareTo(target) < 0)) {
                    List<Pending> batch = readBatch(db, from, target);
                    if (batch.isEmpty()) { // nothing left up to the target (a purge moves the update seq without a change)
                        from = target;
                        break;
                    }
                    List<String> json = new ArrayList<>();
                    for (Pending p : batch) if (p.docJson() != null) json.add(p.docJson());
                    List<List<MapOutcome>> outcomes = json.isEmpty() ? List.of() : program.mapAll(json);
                    int o = 0;
                    for (Pending p : batch) {
                        Term id = new Term(IndexedFields.ID, p.change().id());
                        var doc = p.docJson() == null ? null : IndexedFields.document(p.change().id(),
                                db.partitioned() ? Partitions.of(p.change().id()) : null, outcomes.get(o++).getFirst(), schema);
                        if (doc == null) w.deleteDocuments(id);
                        else w.updateDocument(id, doc);
                    }
                    from = batch.getLast().change().seq();
                    task.done(batch.size());
                    sinceCommit += batch.size();
                    if (sinceCommit >= COMMIT_DOCS || System.currentTimeMillis() - lastCommit >= COMMIT_MILLIS) {
                        commit(w, new State(from, purge, schema));
                        sinceCommit = 0;
                        lastCommit = System.currentTimeMillis();
                    }
                    if (progress != null) progress.run();
                }
                commit(w, new State(from, purge, schema));
            } finally {
                task.ended();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            idx.building.unlock();
        }
    }

    private MapProgram program(SearchIndexDef def) {
        if (js == null) throw new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
        try {
            return js.indexProgram(new JsEngine.MapSource(def.ddocId(), List.of(def.def()), null));
        } catch (JsFunctionException e) {
            throw new SearchException(400, e.error(), e.reason()); // compilation_error, as a view's map function's
        }
    }

    private static State stateOf(IndexWriter w) {
        Map<String, String> ud = new HashMap<>();
        Iterable<Map.Entry<String, String>> live = w.getLiveCommitData();
        if (live != null) for (Map.Entry<String, String> e : live) ud.put(e.getKey(), e.getValue());
        return State.of(ud);
    }

    private static void commit(IndexWriter w, State s) throws IOException {
        w.setLiveCommitData(s.userData().entrySet());
        w.commit();
    }

    private static long countChanges(Database db, Sequence from, Sequence target) {
        long n = 0;
        for (Cursor<Sequence> c = db.changes(from, target, ScanProperties.FORWARD, (r, ch) -> ch.seq()); c.hasNext(); c.next()) n++;
        return n;
    }

    /** The next changes after {@code from} up to {@code target}, with their documents, in one snapshot. */
    private static List<Pending> readBatch(Database db, Sequence from, Sequence target) {
        ScanProperties props = ScanProperties.FORWARD.rowsPerTransaction(BATCH_DOCS).bytesPerTransaction(BATCH_BYTES).oneTransaction();
        List<Pending> out = new ArrayList<>();
        db.changes(from, target, props, (r, c) -> {
            String json = null;
            if (!c.deleted() && !c.id().startsWith(DocumentJson.DESIGN_PREFIX)) {
                try {
                    StoredDoc d = r.get(c.id(), c.rev(), false);
                    json = Json.write(DocumentJson.render(d));
                } catch (StorageException e) {
                    if (e.kind() != StorageException.Kind.NOT_FOUND) throw e; // replaced since: a later change has it
                }
            }
            return new Pending(c, json);
        }).forEachRemaining(out::add);
        return out;
    }

    // ---------------------------------------------------------------- search, info, cleanup

    /** Runs a query, bringing the index up to date first unless {@code update=false}. */
    public SearchRunner.Result search(Database db, SearchIndexDef def, SearchRequest req) {
        long t0 = System.nanoTime();
        activeSearches.incrementAndGet();
        try {
            boolean current = req.update() && refresh(db, def, Seqs.of(db));
            long latency = (System.nanoTime() - t0) / 1_000_000;
            if (req.update()) updateLatency.record(latency);
            Index idx = index(db, def);
            DirectoryReader r = idx.reader(!current);
            try {
                return SearchRunner.run(r, r == null ? null : idx.stateOf(r).schema(), idx.parsers, req, latency);
            } finally {
                if (r != null) r.decRef();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            activeSearches.decrementAndGet();
            searchLatency.record((System.nanoTime() - t0) / 1e6);
        }
    }

    /** {@code _nouveau_info}'s {@code search_index}. */
    public ObjectNode info(Database db, SearchIndexDef def) {
        ObjectNode out = Json.NODES.objectNode();
        try {
            Index idx = index(db, def);
            DirectoryReader r = idx.reader(true);
            State s = r == null ? null : State.of(r);
            out.put("update_seq", s == null || s.updateSeq() == null ? "0" : s.updateSeq().toHex());
            out.put("purge_seq", s == null || s.purgeSeq() == null ? "0" : s.purgeSeq().toHex());
            out.put("num_docs", r == null ? 0 : r.numDocs());
            out.put("disk_size", idx.dir.totalBytes());
            out.put("signature", def.sig());
            if (r != null) r.decRef();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** {@code _nouveau_cleanup}: drops every index of the database no live design document defines. */
    public void cleanup(Database db, List<String> ddocIds) {
        java.util.Set<String> live = new java.util.HashSet<>();
        for (String id : ddocIds) {
            ObjectNode body;
            try {
                body = ddocBody(db, id);
            } catch (StorageException e) {
                continue; // deleted since
            }
            for (String name : SearchIndexDef.names(body)) {
                try {
                    live.add(SearchIndexDef.parse(id, body, name).sig());
                } catch (SearchException e) {
                    // not a valid index: nothing of it to keep
                }
            }
        }
        db.subspaces().run((tx, h) -> {
            for (String sig : SearchSubspace.signatures(tx, h)) {
                if (live.contains(sig)) continue;
                byte[][] range = SearchSubspace.index(h, sig);
                tx.clear(range[0], range[1]);
            }
            return null;
        });
        synchronized (indexes) {
            for (var it = indexes.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Index> e = it.next();
                String k = e.getKey();
                if (!k.startsWith(db.handle().id() + "/") || live.contains(k.substring(k.indexOf('/') + 1))) continue;
                e.getValue().close();
                it.remove();
            }
        }
    }

    /** {@code POST /_nouveau_analyze}. */
    public static List<String> analyze(String analyzer, String text) {
        return Analyzers.tokens(analyzer, text);
    }

    /** Stops this server's build workers. */
    @Override
    public void close() {
        if (pool != null) pool.close();
    }
}
