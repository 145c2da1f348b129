package dev.chaise.views;

import dev.chaise.storage.Storage;
import dev.chaise.views.index.PurgedDocs;
import dev.chaise.views.index.ReduceTree;
import dev.chaise.views.index.ViewIndexer;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.search.BuildListener;
import dev.chaise.views.search.SearchIndexes;
import java.time.Duration;

/**
 * Owns wiring the views module for one server: makes each part once over one storage and one
 * engine, switches on what the server asks for (interactive views, builds as jobs, autoupdate),
 * hands each part to whoever needs that job done, and stops them. It does none of the work.
 * Storage never calls back into views except through the hooks registered here.
 */
public final class ViewsModule implements AutoCloseable {
    /** The blocks of search index files kept in memory: a 100,000-document index's hot part fits. */
    private static final long SEARCH_CACHE_BYTES = 64L << 20;
    private final DesignDocChecks checks;
    private final IndexBuilds builds;
    private final InteractiveIndexes interactive;
    private final AutoUpdate autoUpdate;
    private final ViewQueries queries;
    private final DocFilters filters;
    private final DesignFunctions functions;
    private final IndexMaintenance maintenance;
    private final JsEngine js;
    private final SearchIndexes search;

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

    /** @param js the engine for JavaScript design documents, or null (Mango's indexes only) */
    public ViewsModule(Storage storage, JsEngine js) {
        this(storage, js, Options.defaults());
    }

    public ViewsModule(Storage storage, JsEngine js, Options options) {
        this.js = js;
        if (js != null) js.countInto(storage.stats());
        DesignDocs designs = new DesignDocs(storage.stats());
        IndexPrograms programs = new IndexPrograms(js, storage.stats());
        this.checks = new DesignDocChecks(js, storage.stats());
        this.builds = new IndexBuilds(storage, designs, programs, options.workers(), options.segmentDocs(), options.treeOrder());
        this.interactive = new InteractiveIndexes(storage, programs, builds, options.treeOrder());
        ActiveTasks tasks = builds.tasks();
        this.search = new SearchIndexes(storage, js, (db, ddoc, total) -> {
            ActiveTasks.Task t = tasks.start(db, ddoc, total);
            return new BuildListener.Build() {
                @Override
                public void done(int changes) {
                    t.done(changes);
                }

                @Override
                public void ended() {
                    tasks.end(t);
                }
            };
        }, SEARCH_CACHE_BYTES);
        search.useQueryIndexer(def -> new dev.chaise.views.mango.NouveauFields(def.def())); // Mango's nouveau indexes, built in Java
        this.autoUpdate = new AutoUpdate(storage, designs, builds, search);
        this.queries = new ViewQueries(designs, programs, builds, interactive);
        this.filters = new DocFilters(js, designs);
        this.functions = new DesignFunctions(js);
        this.maintenance = new IndexMaintenance(designs, builds);
        storage.addPurgeHook(new PurgedDocs(programs::reducers)); // purged documents leave every index with the purge
    }

    /** {@code [query_server_config] reduce_limit} as the configuration says now ({@link JsEngine#reduceLimit}). */
    public void reduceLimit(boolean on) {
        if (js != null) js.reduceLimit(on);
    }

    /** Documents written from now on index themselves into interactive indexes (RFC E). */
    public ViewsModule enableInteractiveViews() {
        interactive.enable();
        return this;
    }

    /** Builds run as jobs of {@code queue} from now on, taken by {@code builders} threads here and by other servers. */
    public ViewsModule useJobQueue(JobQueue queue, int builders, Duration activityTimeout) {
        builds.useJobQueue(queue, builders, activityTimeout);
        search.useJobQueue(queue, builders, activityTimeout);
        return this;
    }

    /** CouchDB's background indexer, a pass every {@code delay}. */
    public ViewsModule enableAutoUpdate(Duration delay) {
        autoUpdate.start(delay);
        return this;
    }

    public DesignDocChecks checks() {
        return checks;
    }

    public IndexBuilds builds() {
        return builds;
    }

    public AutoUpdate autoUpdate() {
        return autoUpdate;
    }

    public ViewQueries queries() {
        return queries;
    }

    public DocFilters filters() {
        return filters;
    }

    public DesignFunctions functions() {
        return functions;
    }

    /** The JavaScript engine's name and version; empty without one. */
    public java.util.Optional<JsEngine.About> javascriptEngine() {
        return java.util.Optional.ofNullable(js).map(JsEngine::about);
    }

    public IndexMaintenance maintenance() {
        return maintenance;
    }

    /** Nouveau's full-text indexes. */
    public SearchIndexes search() {
        return search;
    }

    /** Stops the autoupdater and this server's build workers (jobs they held are taken over after the activity timeout). */
    @Override
    public void close() {
        autoUpdate.close();
        builds.close();
        search.close();
    }
}
