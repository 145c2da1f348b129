package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Per-document access control (issue 28; CouchDB's branch {@code rebase/access-2026}): in a
 * database created with {@code ?access=true}, a document's {@code _access} lists the user and role
 * names (principals) that may read and write it. {@link SecuredDb} applies these rules to every
 * document it reads or writes for someone who is not a database admin:
 *
 * <ul>
 *   <li>read: the document's {@code _access} names the user or one of their roles, else 403
 *       {@code forbidden} "access denied"; a document without {@code _access} is for admins only;
 *   <li>write: the new {@code _access} and the stored winner's both name them, else 403
 *       {@code forbidden} "access" (checked inside the write's transaction, replicated writes
 *       too); design documents never carry {@code _access}, whoever writes them.
 * </ul>
 */
final class AccessRules {
    static final String FIELD = "_access";
    /** The role every signed-in user of an access database has, as in the branch's {@code couch_httpd_auth}. */
    static final String USERS_ROLE = "_users";

    private AccessRules() {}

    /** The principals {@code body} names: empty if it has no {@code _access}; 400 if it is not a list of names. */
    static List<String> principals(JsonNode body) {
        return names(body.get(FIELD));
    }

    /** {@link #principals} of an {@code _access} value (null: none). */
    static List<String> names(JsonNode a) {
        if (a == null || a.isNull()) return List.of();
        if (!a.isArray()) throw malformed();
        List<String> out = new ArrayList<>(a.size());
        for (JsonNode p : a) {
            if (!p.isTextual() || p.textValue().isEmpty()) throw malformed();
            if (!out.contains(p.textValue())) out.add(p.textValue());
        }
        return out;
    }

    private static StorageException malformed() {
        return StorageException.badRequest("`_access` must be a list of user and role names.");
    }

    /** {@code body} without {@code _access}: what an access database's revision ids are computed over. */
    static ObjectNode withoutAccess(ObjectNode body) {
        if (!body.has(FIELD)) return body;
        ObjectNode b = body.deepCopy();
        b.remove(FIELD);
        return b;
    }

    /** Whether {@code u} is one of {@code access}'s principals, by name or by role. */
    static boolean allows(UserCtx u, List<String> access) {
        if (u.name() != null && access.contains(u.name())) return true;
        for (String r : u.roles()) if (access.contains(r)) return true;
        return false;
    }

    /** The principals whose listings {@code u}'s are the union of: their name, then their roles. */
    static List<String> principalsOf(UserCtx u) {
        List<String> out = new ArrayList<>();
        if (u.name() != null) out.add(u.name());
        for (String r : u.roles()) if (!out.contains(r)) out.add(r);
        return out;
    }

    /** {@code u} as an access database sees them: a signed-in user who is no server admin also has role {@code _users}. */
    static UserCtx withUsersRole(UserCtx u) {
        if (u.name() == null || u.isServerAdmin() || u.roles().contains(USERS_ROLE)) return u;
        List<String> roles = new ArrayList<>(u.roles());
        roles.add(USERS_ROLE);
        return new UserCtx(u.name(), roles, u.handler());
    }

    static StorageException readDenied() {
        return new StorageException(StorageException.Kind.FORBIDDEN, "access denied");
    }

    static StorageException writeDenied() {
        return new StorageException(StorageException.Kind.FORBIDDEN, "access");
    }

    /** {@code couch_db:validate_doc_update}'s refusal on the branch, in every access database and for everyone. */
    static void checkDesignDoc(String id, ObjectNode body) {
        if (id.startsWith(DocumentJson.DESIGN_PREFIX) && body.has(FIELD)) {
            throw new StorageException(StorageException.Kind.DDOCS_WITH_ACCESS, "Design Docs with an _access property are not allowed");
        }
    }

    /** A read of {@code doc} (rendered, with its {@code _access}) by {@code u}, a non-admin. */
    static void checkRead(UserCtx u, JsonNode doc) {
        if (!allows(u, principals(doc))) throw readDenied();
    }

    /**
     * A deletion that names no {@code _access} (a {@code DELETE}, a replica's tombstone) keeps the
     * stored winner's, as the branch's {@code chttpd_db} does: the tombstone stays its owners', so
     * their feeds and replicas see it.
     */
    static DocUpdate keepAccessOnDeletion(Database db, DocUpdate u) {
        boolean deleted = u.path() != null ? u.path().deleted() : u.deleted();
        if (!deleted || u.body().has(FIELD)) return u;
        Stored stored = db.read(r -> stored(r, u.id()));
        if (stored == null || stored.access() == null) return u;
        ObjectNode b = u.body().deepCopy();
        b.set(FIELD, stored.access());
        return u.withBody(b);
    }

    /** A stored winner's {@code _access} (null if it has none). */
    private record Stored(JsonNode access) {}

    /** The stored winner's {@code _access}, deleted or not, or null if the document never existed. */
    private static Stored stored(DbReader r, String id) {
        List<RevisionsSubspace.Branch> last = RevisionsSubspace.lastBranches(r.tx(), r.handle(), id, 1);
        if (last.isEmpty()) return null;
        EditBranch b = last.getFirst().branch();
        ObjectNode body = DocumentBodies.readMembers(r.tx(), r.handle(), id, b.leaf(), b.deleted(), Set.of(FIELD));
        return new Stored(body == null ? null : body.get(FIELD));
    }

    /** Whether {@code u} may write document {@code id} as it is stored: it does not exist, or its winner's {@code _access} names them. */
    static boolean mayWrite(DbReader r, UserCtx u, String id) {
        Stored stored = stored(r, id);
        return stored == null || allows(u, names(stored.access()));
    }

    /**
     * The write check of a non-admin {@code u}, inside the write's transaction (read as a
     * snapshot: the write's own revision read already conflicts with any concurrent edit of the
     * document): the new {@code _access} names them and, if the document exists, so does the
     * stored winner's. Replicated revisions are checked the same way, so a replica cannot add a
     * branch to someone else's document.
     */
    static DocumentValidator writeCheck(UserCtx u) {
        return snapshot -> new DocumentValidator.Checks() {
            @Override
            public void check(ObjectNode newDoc, Supplier<ObjectNode> oldDoc) {
                if (!allows(u, principals(newDoc))) throw writeDenied();
                if (!mayWrite(snapshot, u, newDoc.path("_id").asText())) throw writeDenied();
            }

            @Override
            public void close() {}
        };
    }
}
