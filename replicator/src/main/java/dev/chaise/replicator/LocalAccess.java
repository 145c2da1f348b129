package dev.chaise.replicator;

import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.UserCtx;

/**
 * How a replication reaches a database of this server: opened through storage's door for the
 * user the replication runs as, so a local endpoint allows exactly what that user could do over
 * HTTP ({@code _security}, validate_doc_update, the system databases' rules, design documents for
 * database admins). Refusals are CouchDB's replication errors: {@code db_not_found},
 * {@code unauthorized}, {@code forbidden}.
 */
public final class LocalAccess {
    private final Storage storage;

    public LocalAccess(Storage storage) {
        this.storage = storage;
    }

    static UserCtx userCtx(ReplicationSpec.RepUser user) {
        return new UserCtx(user.name(), user.roles(), "replication");
    }

    public SecuredDb open(String name, ReplicationSpec.RepUser user) {
        try {
            return storage.open(name, userCtx(user), SecuredDb.Level.MEMBER);
        } catch (StorageException e) {
            throw switch (e.kind()) {
                case UNAUTHORIZED -> new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + name);
                case FORBIDDEN -> new ReplicationException(403, "forbidden", name);
                default -> new ReplicationException(404, "db_not_found", "could not open " + name);
            };
        }
    }

    /** {@code create_target}: creates the database (server admins only), then opens it. */
    public SecuredDb create(String name, ReplicationSpec.RepUser user) {
        if (!user.isAdmin()) {
            if (!storage.exists(name)) throw new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + name);
        } else {
            try {
                storage.create(name);
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.FILE_EXISTS) {
                    boolean bad = e.kind() == StorageException.Kind.ILLEGAL_DATABASE_NAME || e.kind() == StorageException.Kind.DATABASE_NAME_TOO_LONG;
                    throw new ReplicationException(bad ? 400 : 500, e.error(), e.reason());
                }
            }
        }
        return open(name, user);
    }
}
