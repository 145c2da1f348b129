package dev.chaise.storage;

import dev.chaise.kv.StoreTimer;
import dev.chaise.stats.Counter;
import dev.chaise.stats.Histogram;
import dev.chaise.stats.Stats;
import java.util.function.IntSupplier;

/**
 * CouchDB's database metrics ({@code couch_db}, {@code couch_db_updater}, {@code couch_server}),
 * counted where storage does the same thing. Those the store's timer already counts are read
 * from it; the rest are counted here.
 */
final class StorageStats {
    /** One per write request (couch_db:update_docs), however many documents it carries. */
    final Counter databaseWrites;
    /** Documents written that did not exist before. */
    final Counter documentInserts;
    /** One per purge request (couch_db:purge_docs). */
    final Counter databasePurges;
    /** Documents of a write request answered with an error (fabric_doc_update's {@code errors}). */
    final Counter docUpdateErrors;
    /** Reading a database's directory entry, when its handle was not cached. */
    final Histogram dbOpenTime;

    StorageStats(Stats stats, StoreTimer timer, IntSupplier openHandles) {
        stats.counter("couchdb.database_reads", null, "number of times a document was read from a database",
                () -> timer.count(StorageCounts.DOCUMENTS_READ));
        stats.counter("couchdb.document_writes", null, "number of documents written",
                () -> timer.count(StorageCounts.DOCUMENTS_WRITTEN));
        stats.counter("couchdb.local_document_writes", null, "number of _local documents written",
                () -> timer.count(StorageCounts.LOCAL_DOCUMENTS_WRITTEN));
        stats.counter("couchdb.commits", null, "number of read-write transactions committed", () -> timer.count(StoreTimer.Counts.COMMITS));
        stats.gauge("couchdb.open_databases", "number of open databases", openHandles::getAsInt);
        databaseWrites = stats.counter("couchdb.database_writes", "number of times a database was changed");
        documentInserts = stats.counter("couchdb.document_inserts", "number of documents written that did not exist before");
        databasePurges = stats.counter("couchdb.database_purges", "number of purge requests carried out");
        docUpdateErrors = stats.counter("fabric.doc_update.errors", "number of documents a write request answered with an error");
        dbOpenTime = stats.histogram("couchdb.db_open_time", "milliseconds to read a database's metadata when it is not cached");
    }
}
