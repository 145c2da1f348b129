package dev.chaise.storage;

/**
 * One event of {@code _db_updates}: a database was created, updated or deleted.
 *
 * @param seq where the event sits in the feed: 24 hex digits, sorting as the feed does
 */
public record DbUpdate(String dbName, String type, String seq) {}
