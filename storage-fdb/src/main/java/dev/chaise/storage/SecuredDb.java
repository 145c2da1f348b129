package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A database opened for someone: the one door through which requests and the server's own tasks
 * read and write documents, as CouchDB's {@code fabric2_db} is opened with a {@code user_ctx}.
 * It applies the database's policy itself, so no caller can forget a rule:
 *
 * <ul>
 *   <li>at opening ({@link Storage#open(String, UserCtx, Level)}), {@code _security}: 401 to an
 *       anonymous caller who may not, 403 to a signed-in one, as {@code couch_db} decides them;
 *   <li>on every write, design documents for database admins only, then each registered
 *       {@link DbPolicy}'s {@code beforeUpdate} (the {@code _users} and {@code _replicator}
 *       rules, design documents that must compile), then their validators (validate_doc_update)
 *       inside the write's transaction;
 *   <li>on every document it hands out ({@link #render}, {@link #visible}), each policy's
 *       {@code afterRead} ({@code _users}: no one else's password hash);
 *   <li>in a per-document access database, {@link AccessRules} before all of these, on every path.
 * </ul>
 *
 * <p>Reads that return no document bodies (counts, ids, revisions, attachments' bytes, the raw
 * {@link #database()} for views' and Mango's scans) need nothing more than membership.
 */
public final class SecuredDb {

    /** What the caller must be to open the database. */
    public enum Level {
        /** Read or write documents: a member (or anyone, if the database has no members). */
        MEMBER,
        /** Change {@code _security}, {@code _revs_limit}: a database admin (401 anonymous, 403 signed in). */
        DB_ADMIN,
        /** Compact, clean up views: a database admin, 401 to everyone else ({@code chttpd_auth_request:require_db_admin}). */
        REQUIRE_DB_ADMIN,
        /** Create, delete, purge: a server admin (401 to everyone else). */
        SERVER_ADMIN
    }

    /** {@code couch_db:check_is_admin}'s reason. */
    public static final String NOT_DB_ADMIN = "You are not a db or server admin.";
    public static final String NOT_SERVER_ADMIN = "You are not a server admin.";

    private final Database db;
    private final UserCtx user;
    private final SecurityObject security;
    private final List<DbPolicy> policies;
    /**
     * Set when opened from the cached handle ({@link Storage#openToUpdate}): the level to open
     * the database at again if the write's transaction finds its directory entry changed.
     */
    private final Level reopenAt;

    SecuredDb(Database db, UserCtx user, SecurityObject security, List<DbPolicy> policies) {
        this(db, user, security, policies, null);
    }

    private SecuredDb(Database db, UserCtx user, SecurityObject security, List<DbPolicy> policies, Level reopenAt) {
        this.db = db;
        this.user = user;
        this.security = security;
        this.policies = policies;
        this.reopenAt = reopenAt;
    }

    /** This opening, made from a cached handle: its write checks the handle in its own transaction ({@link Storage#openToUpdate}). */
    SecuredDb checkedAtWrite(Level level) {
        return new SecuredDb(db, user, security, policies, level);
    }

    /** The write's transaction found the directory entry changed since a cached opening: nothing was written. */
    private static final class StaleOpening extends RuntimeException {
        StaleOpening() {
            super("the database changed since it was opened", null, false, false);
        }
    }

    /** Opens {@code db} for {@code user}, or throws 401/403 as CouchDB decides them. */
    static SecuredDb open(Database db, UserCtx user, Level level, List<DbPolicy> policies) {
        if (db.isAccess()) user = AccessRules.withUsersRole(user);
        SecurityObject sec = SecurityObject.ofStored(db.securityJson());
        switch (level) {
            case MEMBER -> {
                if (!sec.isMember(user)) throw denied(user, "You are not allowed to access this db.", "You are not authorized to access this db.");
            }
            case DB_ADMIN -> {
                if (!sec.isAdmin(user)) throw denied(user, NOT_DB_ADMIN, NOT_DB_ADMIN);
            }
            case REQUIRE_DB_ADMIN -> {
                if (!sec.isAdmin(user)) throw new StorageException(StorageException.Kind.UNAUTHORIZED, "You are not a server or db admin.");
            }
            case SERVER_ADMIN -> requireServerAdmin(user);
        }
        return new SecuredDb(db, user, sec, policies);
    }

    /** CouchDB answers 401 here even to signed-in users. */
    public static void requireServerAdmin(UserCtx u) {
        if (!u.isServerAdmin()) throw new StorageException(StorageException.Kind.UNAUTHORIZED, NOT_SERVER_ADMIN);
    }

    /** {@code couch_db:throw_security_error}: unauthorized for an anonymous caller, forbidden for a signed-in one. */
    public static StorageException denied(UserCtx u, String forbidden, String unauthorized) {
        return u.isAnonymous() ? new StorageException(StorageException.Kind.UNAUTHORIZED, unauthorized)
                : new StorageException(StorageException.Kind.FORBIDDEN, forbidden);
    }

    public String name() {
        return db.name();
    }

    public UserCtx user() {
        return user;
    }

    public SecurityObject security() {
        return security;
    }

    /** A database admin (server admins are). */
    public boolean isAdmin() {
        return security.isAdmin(user);
    }

    /** {@code couch_db:check_is_admin}: 401 to an anonymous caller, 403 to a signed-in one. */
    public void checkAdmin() {
        if (!isAdmin()) throw denied(user, NOT_DB_ADMIN, NOT_DB_ADMIN);
    }

    /**
     * The database for reads that hand out no document the policy must see first: counts,
     * revisions, changes rows, attachments, and the scans of views and Mango, whose documents
     * come back through {@link #visible}. Its writes are storage's internal ones.
     */
    public Database database() {
        return db;
    }

    // ---------------------------------------------------------------- reads

    /**
     * Whether this user may read {@code docId} at all ({@link DbPolicy#checkReader}): a read of one
     * document by id asks it first, so a refusal does not tell whether the document exists.
     */
    public void checkReader(String docId) {
        for (DbPolicy p : policies) p.checkReader(this, docId);
    }

    /** {@code doc} as this user may see it (each policy's {@code afterRead}), or a refusal. */
    public ObjectNode visible(ObjectNode doc) {
        if (limitedByAccess()) AccessRules.checkRead(user, doc);
        ObjectNode out = doc;
        for (DbPolicy p : policies) out = p.afterRead(this, out);
        return out;
    }

    /** {@link #visible}, or null for a document this user may not see (a listing's row then has none). */
    public ObjectNode visibleOrNull(ObjectNode doc) {
        try {
            return visible(doc);
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND || e.kind() == StorageException.Kind.FORBIDDEN
                    || e.kind() == StorageException.Kind.UNAUTHORIZED) return null;
            throw e;
        }
    }

    /** A stored document rendered with {@code meta}, as this user may see it. */
    public ObjectNode render(StoredDoc doc, DocumentJson.Meta meta) {
        return visible(DocumentJson.render(doc, meta, database().revsLimit()));
    }

    /** {@link #render}, or null for a document this user may not see. */
    public ObjectNode renderOrNull(StoredDoc doc, DocumentJson.Meta meta) {
        return visibleOrNull(DocumentJson.render(doc, meta, database().revsLimit()));
    }

    /** A document ({@link Database#get}) this user may read, or the refusal ({@link AccessRules}). */
    public StoredDoc get(String id, RevId rev, boolean withBranches) {
        StoredDoc d = db.get(id, rev, withBranches);
        if (limitedByAccess()) AccessRules.checkRead(user, d.body());
        return d;
    }

    /**
     * A database query that is not this user's documents (views, Mango, design functions): in an
     * access database only its admins may, as on CouchDB's branch (403 "access denied").
     */
    public void checkQuery() {
        if (limitedByAccess()) throw AccessRules.readDenied();
    }

    /** An access database, opened for someone who is not its admin: every document passes {@link AccessRules}. */
    public boolean limitedByAccess() {
        return db.isAccess() && !isAdmin();
    }

    /**
     * What this user may read of an access database ({@link #limitedByAccess}), deleted documents
     * included, each once, in id order: the union of their name's and roles' listings
     * ({@link AccessIndex}), read as it is iterated, a few transactions at a time.
     */
    public Iterable<DocInfo> accessibleDocs() {
        return () -> everyAccessible(null);
    }

    /** All of this user's documents within {@code partition} (null: all), deleted ones included, in id order. */
    private Iterator<DocInfo> everyAccessible(String partition) {
        return AccessIndex.documents(db, AccessRules.principalsOf(user), partition, Database.IdRange.ALL, ScanProperties.FORWARD, true);
    }

    /**
     * This user's live documents within {@code partition} (null: all) and {@code range}, in id
     * order or backwards, up to {@code props.returnLimit()}: each of their listings is read only
     * as far as the merge needs, so a limit of n reads about n rows of each.
     */
    public Iterator<DocInfo> accessibleDocs(String partition, Database.IdRange range, ScanProperties props) {
        return AccessIndex.documents(db, AccessRules.principalsOf(user), partition, range, props, false);
    }

    /** Document {@code id}, deleted or not, if this user may read it; else null. Read by key, in {@code r}'s transaction. */
    public DocInfo accessibleDoc(DbReader r, String id) {
        return AccessIndex.document(r, AccessRules.principalsOf(user), id);
    }

    /**
     * {@code GET /{db}} as this user may see it: in an access database a user's document counts
     * are their own documents' ({@link #accessibleDocs}), and no sizes (they are kept for the
     * database and each partition, not per user), so counts leak nothing of others' documents.
     */
    public DbInfo info() {
        DbInfo i = db.info();
        return limitedByAccess() ? withCounts(i, ownCounts(everyAccessible(null))) : i;
    }

    /**
     * A database's info in a listing of databases ({@code _dbs_info}), which CouchDB gives whoever
     * may list databases, member or not: an access database's as {@link #info()} gives it to
     * {@code user}, and with no counts at all to someone who is not its member (they may read
     * none of its documents).
     */
    static DbInfo listed(Database db, UserCtx user, List<DbPolicy> policies) {
        if (!db.isAccess()) return db.info();
        try {
            return open(db, user, Level.MEMBER, policies).info();
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.FORBIDDEN && e.kind() != StorageException.Kind.UNAUTHORIZED) throw e;
            return withCounts(db.info(), new DbStats.Snapshot(0, 0, 0, 0));
        }
    }

    private static DbInfo withCounts(DbInfo i, DbStats.Snapshot own) {
        return new DbInfo(i.name(), i.uuid(), own.docCount(), own.docDelCount(), i.updateSeq(), 0, 0, i.purgeSeq(), i.partitioned(), i.access());
    }

    /** A partition's counters ({@link PartitionStats}) as this user may see them, as {@link #info()}. */
    public DbStats.Snapshot partitionInfo(String partition) {
        return limitedByAccess() ? ownCounts(everyAccessible(partition)) : db.partitionInfo(partition);
    }

    /**
     * This user's documents, counted as their listing streams by: the union of their principals'
     * ranges, which no counter kept per principal can give.
     */
    private static DbStats.Snapshot ownCounts(Iterator<DocInfo> docs) {
        long live = 0, deleted = 0;
        while (docs.hasNext()) {
            if (docs.next().deleted()) deleted++;
            else live++;
        }
        return new DbStats.Snapshot(live, deleted, 0, 0);
    }

    /** This user's changes feed in an access database after {@code since} (null: all), each document once at its last change. */
    public Iterable<AccessIndex.AccessChange> accessibleChanges(Sequence since) {
        return () -> accessibleChanges(since, ScanProperties.FORWARD);
    }

    /**
     * {@link #accessibleChanges(Sequence)} read as {@code props} say (backwards from the last
     * change, ignoring {@code since}; up to a limit), as it is iterated, across transactions.
     */
    public Iterator<AccessIndex.AccessChange> accessibleChanges(Sequence since, ScanProperties props) {
        return AccessIndex.changes(db, AccessRules.principalsOf(user), since, props);
    }

    /** For a document this user may not read: the revision they lost it at, or null if they never could ({@link AccessIndex#revokedRev}). */
    public RevId lostAt(DbReader r, String id) {
        return AccessIndex.lostAt(r, AccessRules.principalsOf(user), id);
    }

    /**
     * {@link Database#revsDiff} as this user may see it: in an access database, someone else's
     * document is never missing, so a replica does not try to push to it.
     */
    public List<Database.RevsDiff> revsDiff(List<String> ids, List<List<RevId>> revs) {
        List<Database.RevsDiff> all = db.revsDiff(ids, revs);
        if (!limitedByAccess() || all.isEmpty()) return all;
        return db.read(r -> all.stream().filter(d -> AccessRules.mayWrite(r, user, d.id())).toList());
    }

    /** Whether this user may read {@code doc} (rendered): {@link #visible} would not refuse it for access. */
    public boolean mayRead(com.fasterxml.jackson.databind.JsonNode doc) {
        return !limitedByAccess() || AccessRules.allows(user, AccessRules.principals(doc));
    }

    // ---------------------------------------------------------------- writes

    /**
     * Writes documents as this user: each passes the design-document check and every policy's
     * {@code beforeUpdate} here, then every policy's validator in its own transaction. Each
     * document gets its own result; one refused before the write is not written.
     */
    public List<UpdateResult> update(List<DocUpdate> docs, boolean newEdits) {
        return write(docs, newEdits, false);
    }

    /**
     * All documents in one transaction, or none: if any is refused, before or in the write,
     * nothing is written and the results say which failed (the others' results have neither a
     * revision nor an error).
     */
    public List<UpdateResult> updateAllOrNothing(List<DocUpdate> docs, boolean newEdits) {
        return write(docs, newEdits, true);
    }

    private List<UpdateResult> write(List<DocUpdate> docs, boolean newEdits, boolean allOrNothing) {
        if (reopenAt == null) return checkAndWrite(docs, newEdits, allOrNothing);
        // Several documents may take several transactions: the first would not be redone alone.
        if (docs.size() != 1) return reopened().write(docs, newEdits, allOrNothing);
        try {
            return checkAndWrite(docs, newEdits, allOrNothing);
        } catch (StorageException e) {
            // The database deleted, perhaps created again, since the handle was cached: nothing written.
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
        } catch (StaleOpening e) {
            // Its entry changed: nothing written.
        }
        // Every check again, as a fresh opening at the write's version allows (or refuses).
        return reopened().write(docs, newEdits, allOrNothing);
    }

    /** This database opened again in a transaction, for the same user at the same level. */
    private SecuredDb reopened() {
        return db.storage().open(db.name(), user, reopenAt);
    }

    private List<UpdateResult> checkAndWrite(List<DocUpdate> docs, boolean newEdits, boolean allOrNothing) {
        UpdateResult[] out = new UpdateResult[docs.size()];
        List<DocUpdate> passed = new ArrayList<>(docs.size());
        List<Integer> at = new ArrayList<>(docs.size());
        for (int i = 0; i < docs.size(); i++) {
            DocUpdate u = docs.get(i);
            try {
                if (db.partitioned()) Partitions.validateDocId(u.id()); // requests checked it already; the server's own writes too
                checkWriter(u.id());
                if (db.isAccess()) u = checkAccess(u);
                for (DbPolicy p : policies) u = p.beforeUpdate(this, u, newEdits);
                passed.add(u);
                at.add(i);
            } catch (StorageException e) {
                out[i] = new UpdateResult(docs.get(i).id(), null, e);
            }
        }
        if (allOrNothing && passed.size() < docs.size()) {
            for (int i = 0; i < out.length; i++) if (out[i] == null) out[i] = new UpdateResult(docs.get(i).id(), null, null);
            return List.of(out);
        }
        if (!passed.isEmpty()) {
            DocumentValidator v = validator();
            List<UpdateResult> written = allOrNothing ? db.updateAllOrNothing(passed, newEdits, v) : db.update(passed, newEdits, v);
            for (int k = 0; k < written.size(); k++) out[at.get(k)] = written.get(k);
        }
        return List.of(out);
    }

    /** One document through {@link #update}: its new revision, or its error thrown. */
    public UpdateResult updateOne(DocUpdate doc, boolean newEdits) {
        UpdateResult r = update(List.of(doc), newEdits).getFirst();
        if (!r.ok()) throw r.error();
        return r;
    }

    /**
     * {@code couch_db:validate_docid}: the id rules of every database, and in a partitioned one a
     * valid {@code partition:docid} ({@link Partitions}); throws {@code illegal_docid} or
     * {@code illegal_partition}.
     */
    public void validateDocId(String docId) {
        if (db.partitioned()) Partitions.validateDocId(docId);
        else DocumentJson.validateId(docId);
    }

    /**
     * A document id the database will store: in a partitioned one, an id without a partition
     * (a generated one, a purge's) is refused, as CouchDB's routing by partition refuses it.
     */
    public void requirePartition(String docId) {
        if (db.partitioned()) Partitions.requirePartition(docId);
    }

    /**
     * Whether this user may write {@code docId} at all (design documents: database admins; then
     * each policy's {@link DbPolicy#checkWriter}): every write asks it, and a request with a body
     * to stream asks it first.
     */
    public void checkWriter(String docId) {
        if (docId.startsWith(DocumentJson.DESIGN_PREFIX)) checkAdmin();
        for (DbPolicy p : policies) p.checkWriter(this, docId);
    }

    /** {@link AccessRules} before the write; the stored document's {@code _access} is checked in its transaction ({@link #validator}). */
    private DocUpdate checkAccess(DocUpdate u) {
        AccessRules.checkDesignDoc(u.id(), u.body());
        AccessRules.principals(u.body());
        DocUpdate kept = AccessRules.keepAccessOnDeletion(db, u);
        if (!isAdmin() && !AccessRules.allows(user, AccessRules.principals(kept.body()))) throw AccessRules.writeDenied();
        return kept;
    }

    private DocumentValidator validator() {
        DocumentValidator all = limitedByAccess() ? AccessRules.writeCheck(user) : DocumentValidator.NONE;
        if (reopenAt != null) all = sameOpening().andThen(all);
        for (DbPolicy p : policies) {
            DocumentValidator v = p.validator(this);
            if (v != null) all = all == DocumentValidator.NONE ? v : all.andThen(v);
        }
        return all;
    }

    /**
     * Opened in the write's transaction, first: the directory entry there (read with a conflict
     * range, so a change before the commit retries the attempt) must be the one this opening's
     * checks used, or the attempt stops before it writes anything.
     */
    private DocumentValidator sameOpening() {
        byte[] opened = db.handle().entry();
        return snapshot -> {
            if (!java.util.Arrays.equals(snapshot.handle().entry(), opened)) throw new StaleOpening();
            return null;
        };
    }

    // ---------------------------------------------------------------- _local documents

    /** A {@code _local} document: 404 "missing" if there is none. */
    public LocalDoc getLocal(String id) {
        LocalDoc d = db.getLocal(id);
        if (limitedByAccess()) AccessRules.checkRead(user, d.body());
        return d;
    }

    /** A {@code _local} document written as CouchDB 3 does ({@link Database#writeLocal}). */
    public LocalDoc writeLocal(String id, String clientRev, boolean deleted, ObjectNode body) {
        if (limitedByAccess()) {
            // _local documents keep _access in their body and answer to it as documents do; a
            // deletion names no _access, so the stored one decides. One written without _access
            // is its writer's: a replica's checkpoint (PouchDB writes them without) stays theirs.
            if (!deleted && !body.has(AccessRules.FIELD) && user.name() != null) {
                body = body.deepCopy();
                body.putArray(AccessRules.FIELD).add(user.name());
            }
            if (!deleted && !AccessRules.allows(user, AccessRules.principals(body))) throw AccessRules.writeDenied();
            LocalDoc stored = db.read(r -> r.local(id));
            if (stored != null && !AccessRules.allows(user, AccessRules.principals(stored.body()))) throw AccessRules.writeDenied();
        }
        return db.writeLocal(id, clientRev, deleted, body);
    }

    // ---------------------------------------------------------------- attachments

    /** {@link Database#readAttachment}: an attachment body of a multipart document, stored ahead. */
    public StoredAttachment readAttachment(String docId, String name, ObjectNode meta, InputStream in) {
        return db.readAttachment(docId, name, meta, in);
    }

    // ---------------------------------------------------------------- administration

    /** CouchDB's purge: server admins only. */
    public List<Purged> purge(List<PurgeRequest> requests) {
        requireServerAdmin(user);
        for (PurgeRequest r : requests) requirePartition(r.id());
        return db.purge(requests);
    }

    public void setPurgedInfosLimit(int limit) {
        requireServerAdmin(user);
        db.setPurgedInfosLimit(limit);
    }

    public void setSecurity(String securityJson) {
        checkAdmin();
        db.setSecurity(securityJson);
    }

    public void setRevsLimit(int limit) {
        checkAdmin();
        db.setRevsLimit(limit);
    }
}
