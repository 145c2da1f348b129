package dev.chaise.http.auth;

import dev.chaise.http.ConfigStore;
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

    public ServerAdmins(ConfigStore config) {
        this.config = config;
    }

    @Override
    public Optional<Credentials> lookup(String name) {
        return config.get(SECTION, name).flatMap(v -> {
            Optional<PasswordHash> h = PasswordHash.parseAdmin(v);
            if (h.isEmpty()) log.warn("[admins] {} is not a password hash CouchDB understands; that admin cannot log in", name);
            return h.map(hash -> new Credentials(name, List.of(UserCtx.ADMIN_ROLE), hash));
        });
    }

    public boolean any() {
        return !config.section(SECTION).isEmpty();
    }

    /**
     * Replaces every plain-text password in {@code [admins]} with its hash, persisting it, as
     * CouchDB does at start so clear passwords do not stay in the ini.
     */
    public static void hashPlainTextPasswords(ConfigStore config, String prf, int iterations) {
        config.section(SECTION).forEach((name, value) -> {
            if (!PasswordHash.isHashed(value)) {
                config.set(SECTION, name, PasswordHash.create(value, prf, iterations).toAdminString(), true);
                log.info("hashed the plain-text password of admin {}", name);
            }
        });
    }
}
