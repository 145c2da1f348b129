package dev.chaise.http.metrics;

import dev.chaise.stats.Counter;
import dev.chaise.stats.Histogram;
import dev.chaise.stats.Stats;

/**
 * CouchDB's metrics of particular endpoints (chttpd_db, chttpd_view), counted by their handlers.
 * Made from the registry by each handler that counts, once: the registry gives every handler the
 * same meters.
 */
public record HttpdStats(Counter bulkRequests, Histogram bulkDocs, Counter purgeRequests, Counter purgesTotal, Counter purgesSuccess,
                         Counter purgesFailure, Counter viewReads, Histogram dbinfo) {
    public static HttpdStats of(Stats s) {
        return new HttpdStats(
                s.counter("couchdb.httpd.bulk_requests", "number of _bulk_docs and _bulk_get requests"),
                s.histogram("couchdb.httpd.bulk_docs", "number of documents in each _bulk_docs request"),
                s.counter("couchdb.httpd.purge_requests", "number of _purge requests"),
                s.counter("couchdb.document_purges.total", "number of documents named in _purge requests"),
                s.counter("couchdb.document_purges.success", "number of documents _purge answered for"),
                s.counter("couchdb.document_purges.failure", "number of documents _purge failed for"),
                s.counter("couchdb.httpd.view_reads", "number of view queries (each of a queries request)"),
                s.histogram("couchdb.dbinfo", "milliseconds to read a database's information (GET /{db})"));
    }
}
