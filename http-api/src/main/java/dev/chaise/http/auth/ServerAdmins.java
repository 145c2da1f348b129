package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.config.HttpConfig;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server admins: the {@code [admins]} section of the live config, each with role {@code _admin}.
 * Read on every lookup, so a {@code PUT /_node/_local/_config/admins/NAME} takes effect at once.
 */
public final class ServerAdmins implements UserDirectory {
    private static final Logger log = LoggerFactory.getLogger(ServerAdmins.class);
    public static final String SECTION = "admins";

    private final ConfigStore config;

    /** An admin's setting as last read, and what it parsed to: parsed again only when the text changes. */
    private record Parsed(String text, Optional<Credentials> credentials) {}

    private final java.util.concurrent.ConcurrentHashMap<String, Parsed> parsed = new java.util.concurrent.ConcurrentHashMap<>();

    public ServerAdmins(ConfigStore config) {
        this.config = config;
    }

    @Override
    public Optional<Credentials> lookup(String name) {
        return config.get(SECTION, name).flatMap(v -> {
            Parsed last = parsed.get(name);
            if (last == null || !last.text().equals(v)) {
                Optional<PasswordHash> h = PasswordHash.parseAdmin(v);
                if (h.isEmpty()) log.warn("[admins] {} is not a password hash CouchDB understands; that admin cannot log in", name);
                last = new Parsed(v, h.map(hash -> new Credentials(name, List.of(UserCtx.ADMIN_ROLE), hash)));
                if (parsed.size() >= 1_000) parsed.clear();
                parsed.put(name, last);
            }
            return last.credentials();
        });
    }

    /** Whether {@code name} is a server admin's ({@code [admins]} has it), without checking the password. */
    public boolean isAdmin(String name) {
        return name != null && config.get(SECTION, name).isPresent();
    }

    public boolean any() {
        return !config.section(SECTION).isEmpty();
    }

    /**
     * What {@code [admins]} keeps for a password: a hash as it is, plain text hashed with the
     * configured PBKDF2 settings, as CouchDB hashes admins' passwords before storing them. The one
     * place an admin password is hashed: at start, from the environment, and through {@code _config}.
     */
    public static String stored(String password, HttpConfig.Auth auth) {
        return PasswordHash.isHashed(password) ? password : PasswordHash.create(password, auth.pbkdf2Prf(), auth.iterations()).toAdminString();
    }
}
