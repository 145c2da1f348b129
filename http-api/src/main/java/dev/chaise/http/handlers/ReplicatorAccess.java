package dev.chaise.http.handlers;

import dev.chaise.http.HttpError;
import dev.chaise.http.auth.Access;
import dev.chaise.http.auth.UserCtx;
import dev.chaise.replicator.LocalAccess;
import dev.chaise.replicator.ReplicationException;
import dev.chaise.replicator.ReplicationSpec;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.views.DesignDocChecks;

/**
 * Local endpoints of a replication, opened with a request's checks for the replication's user:
 * membership ({@code _security}), the validate_doc_update functions and {@code _users}' rules a
 * {@code _bulk_docs} by that user meets, and design documents for database admins only. Refusals
 * are CouchDB's replication errors: {@code db_not_found}, {@code unauthorized}, {@code forbidden}.
 */
public final class ReplicatorAccess implements LocalAccess {
    private final Storage storage;
    private final Access access;
    private final DesignDocChecks checks;

    public ReplicatorAccess(Storage storage, Access access, DesignDocChecks checks) {
        this.storage = storage;
        this.access = access;
        this.checks = checks;
    }

    @Override
    public LocalDb open(String name, ReplicationSpec.RepUser user) {
        UserCtx u = new UserCtx(user.name(), user.roles(), null);
        try {
            Access.Db db = access.database(u, name, Access.Level.MEMBER);
            return new LocalDb(db.db(), DocSupport.validator(checks, db), DocSupport.isDesignWriter(db));
        } catch (HttpError e) {
            if (e.status() == 401) throw new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + name);
            if (e.status() == 403) throw new ReplicationException(403, "forbidden", name);
            throw new ReplicationException(404, "db_not_found", "could not open " + name);
        } catch (StorageException e) {
            throw new ReplicationException(404, "db_not_found", "could not open " + name);
        }
    }

    @Override
    public LocalDb create(String name, ReplicationSpec.RepUser user) {
        if (!user.isAdmin()) {
            if (!storage.exists(name)) throw new ReplicationException(401, "unauthorized", "unauthorized to access or create database " + name);
        } else {
            try {
                storage.create(name);
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.FILE_EXISTS) {
                    throw new ReplicationException(e.kind() == StorageException.Kind.ILLEGAL_DATABASE_NAME ? 400 : 500, e.error(), e.reason());
                }
            }
        }
        return open(name, user);
    }
}
