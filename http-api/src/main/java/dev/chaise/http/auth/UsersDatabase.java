package dev.chaise.http.auth;

import dev.chaise.storage.SecurityObject;
import dev.chaise.storage.UserCtx;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.storage.DbPolicy;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.DocumentValidator;
import dev.chaise.storage.StorageException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * CouchDB's {@code _users} database: users besides the server admins, and the rules that guard
 * their documents ({@code org.couchdb.user:NAME}). Users are looked up in
 * {@code [chttpd_auth] authentication_db} ({@code _users} by default); the rules apply there and
 * to every database named {@code _users} or {@code .../_users}, as in CouchDB.
 *
 * <ul>
 *   <li>A {@link UserDirectory}: a user document with a password hash signs its user in, with its
 *       roles; while it has conflicts, 401 (unless {@code [chttpd_auth] allow_conflicted_user_docs}).
 *       A database that does not exist knows no one.
 *   <li>Writes: a plaintext {@code password} must match {@code password_regexp} ({@link PasswordRules})
 *       and is stored as its PBKDF2 hash ({@code [chttpd_auth]} iterations and PRF), never as given.
 *   <li>Access: the database's {@code _security} first, as for any database (CouchDB 3.5 makes
 *       {@code _users} admin-only); then {@link #checkOwnDocument} and {@link #forReader}, CouchDB's
 *       {@code couch_users_db} rules, and no password hash or salt to anyone but an admin.
 *   <li>{@link #rules}: the checks CouchDB's {@code _design/_auth} makes (types, ids, names, and
 *       that only admins set roles or touch other users' documents), with its reasons.
 * </ul>
 *
 * <p>As a {@link DbPolicy} registered with storage, every {@link SecuredDb} of {@code _users}
 * applies these rules itself, whichever path a document takes in or out.
 */
public final class UsersDatabase implements UserDirectory, DbPolicy {
    public static final String NAME = "_users";
    public static final String PREFIX = "org.couchdb.user:";
    private static final Set<String> PASSWORD_FIELDS =
            Set.of("password", "password_scheme", "password_sha", "pbkdf2_prf", "salt", "iterations", "derived_key", "preserve_salt");
    private static final Set<String> SCHEMES = Set.of("simple", "pbkdf2", "simple+pbkdf2");

    static final String CONFLICTED = "User document conflicts must be resolved before the document is used for authentication purposes.";

    private final Storage storage;
    private final Supplier<HttpConfig.Auth> auth;
    private final dev.chaise.http.config.ConfigStore config;

    /**
     * @param auth read at each password write, so {@code [chttpd_auth] iterations} changes apply at once
     * @param config the live config: {@code [chttpd_auth] public_fields}
     */
    public UsersDatabase(Storage storage, Supplier<HttpConfig.Auth> auth, dev.chaise.http.config.ConfigStore config) {
        this.storage = storage;
        this.auth = auth;
        this.config = config;
    }

    /** {@code [chttpd_auth] authentication_db}: where users are looked up; {@code _users} unless configured (read live). */
    public String authenticationDb() {
        return config.get("chttpd_auth", "authentication_db").map(String::strip).filter(v -> !v.isEmpty()).orElse(NAME);
    }

    /**
     * Whether the users database's rules apply to {@code db}: the authentication database, and any
     * database named {@code _users} or ending in {@code /_users} (fabric_util:is_users_db).
     */
    public boolean isUsersDb(String db) {
        return db.equals(authenticationDb()) || db.equals(NAME) || db.endsWith("/" + NAME);
    }

    @Override
    public Optional<Credentials> lookup(String name) {
        ObjectNode d;
        try {
            StoredDoc stored = storage.open(authenticationDb()).get(PREFIX + name, null, true);
            d = stored.body();
            // chttpd_auth_cache:maybe_validate_user_creds: which of two edits holds the password is not for the server to guess.
            if (!stored.conflicts().isEmpty()
                    && !config.get("chttpd_auth", "allow_conflicted_user_docs").map(v -> v.strip().equals("true")).orElse(false)) {
                throw AuthException.unauthorized(CONFLICTED);
            }
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return Optional.empty(); // no such user, or no _users database
            throw e;
        }
        // A document without a type signs its user in, as CouchDB's auth cache reads it (security_validation_test's
        // users are written before the database has _design/_auth's rules); one of another type does not.
        if (d.has("type") && !"user".equals(d.path("type").asText(null))) return Optional.empty();
        if (!name.equals(d.path("name").asText(null))) return Optional.empty();
        List<String> roles = new ArrayList<>();
        for (JsonNode r : d.path("roles")) if (r.isTextual()) roles.add(r.textValue());
        String salt = d.path("salt").asText(null);
        if (salt == null) return Optional.empty();
        try {
            if ("pbkdf2".equals(d.path("password_scheme").asText(null)) && d.path("derived_key").isTextual() && d.path("iterations").canConvertToInt()) {
                PasswordHash h = new PasswordHash(PasswordHash.Scheme.PBKDF2, d.path("pbkdf2_prf").asText("sha"),
                        d.get("derived_key").textValue(), salt, d.get("iterations").intValue());
                return Optional.of(new Credentials(name, roles, h));
            }
            if (d.path("password_sha").isTextual()) {
                return Optional.of(new Credentials(name, roles, new PasswordHash(PasswordHash.Scheme.SIMPLE, "sha", d.get("password_sha").textValue(), salt, 1)));
            }
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // an unknown PRF or a bad iteration count: this document signs no one in
        }
        return Optional.empty();
    }

    // ---------------------------------------------------------------- the policy

    /**
     * A users database has CouchDB's {@code _design/_auth} from its creation (clients and CouchDB's
     * tests wait for it), and (re)creating {@code _users} makes sure the authentication database
     * has one too, as CouchDB's auth cache does when its listener restarts. The design document's
     * rules run in Java ({@link #rules}), and only while it is there, as CouchDB's run only while
     * its function is there; its function itself checks nothing.
     */
    @Override
    public void created(SecuredDb db) {
        if (!isUsersDb(db.name())) return;
        ensureAuthDesign(db);
        String authDb = authenticationDb();
        if (!authDb.equals(db.name()) && storage.exists(authDb)) ensureAuthDesign(storage.open(authDb, UserCtx.server("auth"), SecuredDb.Level.MEMBER));
    }

    /** CouchDB's {@code chttpd_auth_cache:ensure_auth_ddoc_exists}, for {@code _users} and the authentication database, at start. */
    public void ensureAuthDesigns() {
        for (String name : new java.util.LinkedHashSet<>(List.of(NAME, authenticationDb()))) {
            if (storage.exists(name)) ensureAuthDesign(storage.open(name, UserCtx.server("auth"), SecuredDb.Level.MEMBER));
        }
    }

    private static void ensureAuthDesign(SecuredDb db) {
        var w = db.database().winner(AUTH_DESIGN);
        if (w != null && !w.deleted()) return;
        ObjectNode ddoc = dev.chaise.storage.json.Json.NODES.objectNode().put("language", "javascript").put("validate_doc_update",
                "function(newDoc, oldDoc, userCtx, secObj) {\n  // Chaise checks this database's documents in Java (UsersDatabase.rules), with CouchDB's reasons.\n}");
        var r = db.update(List.of(DocUpdate.edit(AUTH_DESIGN, w == null ? null : w.rev(), false, ddoc)), true).getFirst();
        if (!r.ok() && r.error().kind() != StorageException.Kind.CONFLICT) throw r.error(); // a conflict: another server wrote it
    }

    static final String AUTH_DESIGN = "_design/_auth";

    /** {@code couch_users_db:before_doc_update}: one's own document only, the stored hash kept, a plaintext password hashed. */
    @Override
    public DocUpdate beforeUpdate(SecuredDb db, DocUpdate doc, boolean newEdits) {
        if (!isUsersDb(db.name()) || doc.deleted()) return doc;
        ObjectNode body = hashPassword(db.name(), keepPassword(db, doc.id(), doc.body()));
        return body == doc.body() ? doc : doc.withBody(body);
    }

    @Override
    public void checkWriter(SecuredDb db, String docId) {
        checkOwnDocument(db, docId);
    }

    /** {@code couch_users_db:after_doc_read}'s refusal of design documents, whether or not one exists. */
    @Override
    public void checkReader(SecuredDb db, String docId) {
        if (isUsersDb(db.name()) && !db.isAdmin() && docId.startsWith("_design/")) throw forbidden(DESIGN_DOCS_FOR_ADMINS);
    }

    @Override
    public DocumentValidator validator(SecuredDb db) {
        return isUsersDb(db.name()) ? rules(db.user(), db.security()) : null;
    }

    @Override
    public ObjectNode afterRead(SecuredDb db, ObjectNode doc) {
        return forReader(db, doc);
    }

    /** For a document of {@code _users}, the body to store: a plaintext password becomes its hash (CouchDB's before_doc_update). */
    ObjectNode hashPassword(String db, ObjectNode body) {
        if (!isUsersDb(db) || !body.has("password") || body.get("password").isNull()) return body;
        JsonNode password = body.get("password");
        if (!password.isTextual()) throw StorageException.badRequest("password must be a string");
        PasswordRules.check(ProxyHandler.chttpdAuth(config, "password_regexp").orElse(null), password.textValue());
        PasswordHash h = PasswordHash.create(password.textValue(), auth.get().pbkdf2Prf(), auth.get().iterations());
        ObjectNode out = body.deepCopy();
        out.remove(PASSWORD_FIELDS);
        out.put("password_scheme", "pbkdf2");
        out.put("pbkdf2_prf", h.prf());
        out.put("salt", h.salt());
        out.put("iterations", h.iterations());
        out.put("derived_key", h.derivedKey());
        return out;
    }

    private static final String DESIGN_DOCS_FOR_ADMINS = "Only administrators can view design docs in the users database.";

    /** The fields that hold a password's hash: never sent to anyone but an admin. */
    public static final Set<String> SECRET_FIELDS = Set.of("derived_key", "salt", "password_sha", "password");
    private static final Set<String> HASH_FIELDS = Set.of("password_scheme", "pbkdf2_prf", "salt", "iterations", "derived_key", "password_sha");

    private static String nameOf(String docId) {
        return docId != null && docId.startsWith(PREFIX) ? docId.substring(PREFIX.length()) : null;
    }

    /**
     * CouchDB's {@code couch_users_db:before_doc_update} check: in {@code _users}, someone who is
     * not a database admin may write only their own document, or, anonymous, create one (signing
     * up); anything else is 404 {@code not_found}, as CouchDB answers. Only reached when the
     * database's {@code _security} lets the caller in at all (by default only admins are members).
     *
     * @param docId null for a document whose id the server makes up ({@code POST /_users})
     */
    void checkOwnDocument(SecuredDb db, String docId) {
        if (!isUsersDb(db.name()) || db.isAdmin()) return;
        UserCtx u = db.user();
        if (u.isAnonymous() || Objects.equals(u.name(), nameOf(docId))) return;
        throw StorageException.notFound("missing");
    }

    /**
     * A document of {@code _users} as {@code couch_users_db:after_doc_read} lets {@code db}'s user
     * read it: whole to a database admin; a design document to no one else (403); the reader's
     * own document; someone else's only its {@code [chttpd_auth] public_fields}, and 404 when
     * none is set. Unlike CouchDB, which gives users their own document whole, the password's
     * hash and salt ({@link #SECRET_FIELDS}) go to no one but an admin, not even in public fields.
     * Other databases' documents pass unchanged.
     */
    ObjectNode forReader(SecuredDb db, ObjectNode doc) {
        if (!isUsersDb(db.name()) || db.isAdmin()) return doc;
        String id = doc.path("_id").asText("");
        if (id.startsWith("_design/")) throw forbidden(DESIGN_DOCS_FOR_ADMINS);
        ObjectNode out = doc.deepCopy();
        if (Objects.equals(db.user().name(), nameOf(id))) {
            out.remove(SECRET_FIELDS);
            return out;
        }
        Set<String> pub = new java.util.HashSet<>();
        for (String f : config.get("chttpd_auth", "public_fields").orElse("").split("\\s*,\\s*")) if (!f.isBlank()) pub.add(f.strip());
        pub.removeAll(SECRET_FIELDS);
        boolean any = false;
        for (java.util.Iterator<String> it = out.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (f.startsWith("_")) continue; // _id, _rev and the other special members are not the body
            if (pub.contains(f)) any = true;
            else it.remove();
        }
        if (!any) throw StorageException.notFound("missing");
        return out;
    }

    /**
     * Its owner never sees a user document's hash and salt ({@link #forReader}), so an owner's
     * update without a new {@code password} keeps the stored ones rather than losing the login.
     */
    ObjectNode keepPassword(SecuredDb db, String docId, ObjectNode body) {
        if (!isUsersDb(db.name()) || docId == null || db.isAdmin()) return body;
        if (body.has("password") || body.has("derived_key") || body.has("password_sha")) return body;
        if (!Objects.equals(db.user().name(), nameOf(docId))) return body;
        ObjectNode stored;
        try {
            stored = db.database().get(docId, null, false).body();
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return body;
            throw e;
        }
        ObjectNode out = body.deepCopy();
        for (String f : HASH_FIELDS) if (stored.has(f) && !out.has(f)) out.set(f, stored.get(f));
        return out;
    }

    /** CouchDB's {@code _design/_auth} checks, for writes to {@code _users} by {@code user}. */
    public static DocumentValidator rules(UserCtx user, SecurityObject security) {
        boolean admin = security.isAdmin(user);
        return snapshot -> {
            var auth = snapshot.winner(AUTH_DESIGN);
            return auth == null || auth.deleted() ? null : checks(user, admin); // CouchDB's rules are _design/_auth's
        };
    }

    private static DocumentValidator.Checks checks(UserCtx user, boolean admin) {
        return new DocumentValidator.Checks() {
            @Override
            public void check(ObjectNode doc, Supplier<ObjectNode> oldDoc) {
                ObjectNode old = oldDoc.get();
                if (doc.path("_deleted").asBoolean(false)) {
                    if (user.isServerAdmin() || (old != null && Objects.equals(user.name(), old.path("name").asText(null)))) return;
                    throw forbidden("Only admins may delete other user docs.");
                }
                if (!"user".equals(doc.path("type").asText(null))) throw forbidden("doc.type must be user");
                String name = doc.path("name").isTextual() ? doc.get("name").textValue() : "";
                if (name.isEmpty()) throw forbidden("doc.name is required");
                JsonNode roles = doc.get("roles");
                if (roles == null || roles.isNull()) throw forbidden("doc.roles must exist");
                if (!roles.isArray()) throw forbidden("doc.roles must be an array");
                List<String> newRoles = new ArrayList<>();
                for (JsonNode r : roles) {
                    if (!r.isTextual()) throw forbidden("doc.roles can only contain strings");
                    newRoles.add(r.textValue());
                }
                if (!doc.path("_id").asText().equals(PREFIX + name)) throw forbidden("Doc ID must be of the form org.couchdb.user:name");
                if (old != null && !name.equals(old.path("name").asText(null))) throw forbidden("Usernames can not be changed.");
                if (doc.hasNonNull("password_sha") && !doc.hasNonNull("salt")) throw forbidden("Users with password_sha must have a salt.");
                String scheme = doc.path("password_scheme").asText(null);
                if (scheme != null && !scheme.isEmpty() && !SCHEMES.contains(scheme)) throw forbidden("Password scheme `" + scheme + "` not supported.");
                if ("pbkdf2".equals(scheme)) {
                    if (!doc.path("iterations").isNumber()) throw forbidden("iterations must be a number.");
                    if (!doc.path("derived_key").isTextual()) throw forbidden("derived_key must be a string.");
                }
                if (!admin) {
                    if (old != null) {
                        if (!name.equals(user.name())) throw forbidden("You may only update your own user document.");
                        List<String> oldRoles = new ArrayList<>();
                        for (JsonNode r : old.path("roles")) oldRoles.add(r.asText());
                        if (!oldRoles.stream().sorted().toList().equals(newRoles.stream().sorted().toList())) throw forbidden("Only _admin may edit roles");
                    } else if (!newRoles.isEmpty()) {
                        throw forbidden("Only _admin may set roles");
                    }
                }
                for (String r : newRoles) {
                    if (r.startsWith("_") && !r.equals("_metrics")) throw forbidden("No system roles (starting with underscore) in users db.");
                }
                if (name.startsWith("_")) throw forbidden("Username may not start with underscore.");
                if (name.contains(":")) throw forbidden("Character `:` is not allowed in usernames.");
            }

            @Override
            public void close() {}
        };
    }

    private static StorageException forbidden(String reason) {
        return new StorageException(StorageException.Kind.FORBIDDEN, reason);
    }
}
