package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * A database's {@code _security} object: who administers it and who may use it. The JSON is
 * kept as given (CouchDB stores and returns extra members untouched); {@code readers} is read
 * when {@code members} is absent, for old databases, as CouchDB does.
 */
public record SecurityObject(Group admins, Group members, ObjectNode json) {

    public record Group(List<String> names, List<String> roles) {
        public static final Group EMPTY = new Group(List.of(), List.of());

        public Group {
            names = List.copyOf(names);
            roles = List.copyOf(roles);
        }

        public boolean isEmpty() {
            return names.isEmpty() && roles.isEmpty();
        }

        /** CouchDB's is_authorized: a shared role ({@code _admin} always counts) or the user's name. */
        boolean admits(UserCtx u) {
            for (String r : u.roles()) {
                if (r.equals(UserCtx.ADMIN_ROLE) || roles.contains(r)) return true;
            }
            return u.name() != null && names.contains(u.name());
        }
    }

    /** CouchDB 3.5's default for a new database, as couch_db_updater writes it: admins only. */
    public static final String ADMIN_ONLY_JSON =
            "{\"members\":{\"roles\":[\"_admin\"]},\"admins\":{\"roles\":[\"_admin\"]}}";

    /** Parses and validates; invalid objects are 400 with CouchDB's reasons. */
    public static SecurityObject parse(JsonNode node) {
        if (node == null || !node.isObject()) throw StorageException.badRequest("Request body must be a JSON object");
        ObjectNode o = (ObjectNode) node;
        JsonNode members = o.has("members") ? o.get("members") : o.get("readers");
        return new SecurityObject(group(o.get("admins")), group(members), o);
    }

    private static final int CACHED = 1024;
    private static final java.util.concurrent.ConcurrentHashMap<String, SecurityObject> PARSED = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The stored object, parsed once per distinct text: every request opens its database with it,
     * and parsing it each time was a measurable share of a small request's CPU. Records are
     * immutable but for {@code json}, which callers only read.
     */
    public static SecurityObject ofStored(String json) {
        SecurityObject s = PARSED.get(json);
        if (s != null) return s;
        s = parse(json);
        if (PARSED.size() >= CACHED) PARSED.clear(); // a crude bound: distinct _security objects are few
        PARSED.put(json, s);
        return s;
    }

    public static SecurityObject parse(String json) {
        try {
            return parse(Json.MAPPER.readTree(json));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("stored _security is not JSON: " + json, e);
        }
    }

    private static Group group(JsonNode g) {
        if (g == null) return Group.EMPTY;
        if (!g.isObject()) throw StorageException.badRequest("admins or members must be a JSON list of strings");
        return new Group(strings(g.get("names"), "names"), strings(g.get("roles"), "roles"));
    }

    private static List<String> strings(JsonNode a, String what) {
        if (a == null) return List.of();
        String reason = what + " must be a JSON list of strings";
        if (!a.isArray()) throw StorageException.badRequest(reason);
        List<String> out = new ArrayList<>();
        for (JsonNode n : a) {
            if (!n.isTextual()) throw StorageException.badRequest(reason);
            out.add(n.asText());
        }
        return out;
    }

    public boolean isAdmin(UserCtx u) {
        return u.isServerAdmin() || admins.admits(u);
    }

    /** Admins always; anyone when members is empty (a public database); else a listed name or role. */
    public boolean isMember(UserCtx u) {
        return isAdmin(u) || members.isEmpty() || members.admits(u);
    }
}
