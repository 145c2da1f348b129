package dev.chaise.views;

import dev.chaise.storage.Database;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.search.SearchException;
import dev.chaise.views.search.SearchIndexes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Owns keeping indexes current without queries, as CouchDB's background indexer (ken) does: a
 * write to a database marks it, and every delay the marked databases' design documents with
 * {@code autoupdate} (the default) get their indexes (Nouveau's too) brought up to date: as build jobs when builds
 * run on the job queue, else on this updater's thread. {@code autoupdate: false} leaves an index
 * to be built by the next query that wants it.
 */
public final class AutoUpdate implements AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(AutoUpdate.class);
    private final Storage storage;
    private final DesignDocs designs;
    private final IndexBuilds builds;
    private final SearchIndexes search;
    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    private ScheduledExecutorService updater;

    AutoUpdate(Storage storage, DesignDocs designs, IndexBuilds builds, SearchIndexes search) {
        this.storage = storage;
        this.designs = designs;
        this.builds = builds;
        this.search = search;
    }

    /** Marks written databases from now on, and runs {@link #once()} every {@code delay}. */
    void start(Duration delay) {
        storage.addWriteHook((tx, change) -> dirty.add(change.db().name())); // a write that then fails only costs a check
        updater = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("view-autoupdate").daemon().factory());
        updater.scheduleWithFixedDelay(() -> {
            try {
                once();
            } catch (RuntimeException e) {
                log.warn("view autoupdate", e);
            }
        }, delay.toMillis(), delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One pass over the databases written since the last: what the updater runs on its delay. */
    public void once() {
        List<String> dbs = new ArrayList<>(dirty);
        dirty.removeAll(dbs);
        for (String dbName : dbs) {
            Database db;
            List<String> ids;
            try {
                db = storage.open(dbName);
                ids = DesignDocs.ids(db);
            } catch (StorageException e) {
                continue; // deleted since
            }
            for (String id : ids) {
                try {
                    DesignDoc ddoc = designs.get(db, id);
                    if (!ddoc.autoupdate()) continue;
                    if (!ddoc.views().isEmpty() && !builds.request(db, ddoc)) builds.refresh(db, ddoc);
                    search.requestAll(db, id);
                } catch (StorageException | ViewException | SearchException e) {
                    // deleted since, or not a valid index definition: its query will say why
                }
            }
        }
    }

    @Override
    public void close() {
        if (updater != null) updater.shutdownNow();
    }
}
