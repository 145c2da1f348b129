package dev.chaise.http.auth;

import dev.chaise.http.config.ConfigStore;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CouchDB 3.4's account lockout ({@code couch_auth_lockout}, {@code [chttpd_auth_lockout]}): failed
 * password checks are counted per client address, user name and the user's salt; from
 * {@code threshold} failures (5) on, that pair is refused, right password or not, with 403
 * {@code forbidden} "Account is temporarily locked due to multiple authentication failures",
 * until {@code max_lifetime} ms (5 minutes) after its first failure. {@code mode} is
 * {@code enforce} (the default), {@code warn} (log only) or {@code off}. At most
 * {@code max_objects} pairs are tracked. A new password (a new salt) starts a new count.
 */
final class Lockout {
    private static final Logger log = LoggerFactory.getLogger(Lockout.class);
    static final String MESSAGE = "Account is temporarily locked due to multiple authentication failures";

    private record Key(String peer, String name, String salt) {}

    private record Count(long firstMillis, int failures) {}

    private final ConfigStore config;
    private final LongSupplier nowMillis;
    private final ConcurrentHashMap<Key, Count> failures = new ConcurrentHashMap<>();

    Lockout(ConfigStore config, LongSupplier nowMillis) {
        this.config = config;
        this.nowMillis = nowMillis;
    }

    private String mode() {
        String m = config.get("chttpd_auth_lockout", "mode").orElse("enforce").strip().toLowerCase(Locale.ROOT);
        return m.equals("enforce") || m.equals("warn") ? m : "off";
    }

    private long setting(String key, long fallback) {
        try {
            return Long.parseLong(config.get("chttpd_auth_lockout", key).orElse(String.valueOf(fallback)).strip());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** Whether {@code name} from {@code peer} is locked out now (only in {@code enforce} mode). */
    boolean isLocked(String peer, String name, String salt) {
        if (failures.isEmpty()) return false; // the common case, asked on every Basic request: no setting read, no key built
        String mode = mode();
        if (mode.equals("off") || peer == null) return false;
        Count c = live(new Key(peer, name, salt));
        if (c == null || c.failures() < setting("threshold", 5)) return false;
        if (mode.equals("warn")) {
            log.warn("authentication failure threshold reached for {} from {}", name, peer);
            return false;
        }
        log.warn("authentication rejected for locked-out user {} from {}", name, peer);
        return true;
    }

    /** One more failed check of {@code name}'s password from {@code peer}. */
    void failed(String peer, String name, String salt) {
        if (mode().equals("off") || peer == null) return;
        long now = nowMillis.getAsLong();
        long lifetime = setting("max_lifetime", 300_000);
        if (failures.size() >= setting("max_objects", 10_000)) {
            failures.entrySet().removeIf(e -> now - e.getValue().firstMillis() >= lifetime);
            if (failures.size() >= setting("max_objects", 10_000)) { // full of live entries: forget the oldest, as CouchDB's LRU does
                failures.entrySet().stream().min(java.util.Comparator.comparingLong(e -> e.getValue().firstMillis()))
                        .ifPresent(e -> failures.remove(e.getKey(), e.getValue()));
            }
        }
        failures.merge(new Key(peer, name, salt), new Count(now, 1),
                (old, one) -> now - old.firstMillis() >= lifetime ? one : new Count(old.firstMillis(), old.failures() + 1));
    }

    private Count live(Key k) {
        Count c = failures.get(k);
        if (c != null && nowMillis.getAsLong() - c.firstMillis() >= setting("max_lifetime", 300_000)) {
            failures.remove(k, c);
            return null;
        }
        return c;
    }

    /** The address of a request's client, without its port: what CouchDB counts failures by. */
    static String peer(String remoteAddress) {
        if (remoteAddress == null || remoteAddress.isEmpty()) return null;
        String a = remoteAddress.startsWith("/") ? remoteAddress.substring(1) : remoteAddress;
        int slash = a.indexOf('/');
        if (slash >= 0) a = a.substring(slash + 1);
        int colon = a.lastIndexOf(':');
        return colon > 0 ? a.substring(0, colon) : a;
    }
}
