package dev.chaise.replicator;

import dev.chaise.storage.Database;
import dev.chaise.storage.DocumentValidator;

/**
 * How a replication reaches a database of this server as the user it runs as: the HTTP layer
 * implements it with the same checks as a request ({@code _security}, validate_doc_update, design
 * document writers), so a local endpoint allows exactly what the same user could do over HTTP.
 * Failures are {@link ReplicationException}s: {@code db_not_found}, {@code unauthorized}, {@code forbidden}.
 */
public interface LocalAccess {
    /** A database opened for a replication. */
    record LocalDb(Database db, DocumentValidator validator, boolean designWriter) {}

    LocalDb open(String name, ReplicationSpec.RepUser user);

    /** {@code create_target}: creates the database (server admins only), then opens it. */
    LocalDb create(String name, ReplicationSpec.RepUser user);
}
