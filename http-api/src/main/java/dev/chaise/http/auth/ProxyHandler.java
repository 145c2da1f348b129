package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import dev.chaise.http.config.ConfigStore;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * CouchDB's {@code proxy_authentication_handler}: a proxy in front of the server that has signed
 * the user in names them in {@code X-Auth-CouchDB-UserName} and their roles in
 * {@code X-Auth-CouchDB-Roles} (comma-separated); the header names are {@code [chttpd_auth]
 * x_auth_username}, {@code x_auth_roles} and {@code x_auth_token}. With {@code proxy_use_secret =
 * true} and a {@code [chttpd_auth] secret}, {@code X-Auth-CouchDB-Token} must be the hex HMAC of
 * the name under that secret, with one of {@code [chttpd_auth] hash_algorithms} ({@code sha256,
 * sha}); a request whose token does not match is not signed in by this handler (the next one
 * tries), as in CouchDB: a forged header signs no one in.
 */
final class ProxyHandler implements AuthenticationHandler {
    private final ConfigStore config;

    ProxyHandler(ConfigStore config) {
        this.config = config;
    }

    @Override
    public String name() {
        return "proxy";
    }

    private Optional<String> setting(String key) {
        return chttpdAuth(config, key);
    }

    /** chttpd_util:get_chttpd_auth_config: {@code [chttpd_auth]}, then the older {@code [couch_httpd_auth]}. */
    static Optional<String> chttpdAuth(ConfigStore config, String key) {
        return config.get("chttpd_auth", key).or(() -> config.get("couch_httpd_auth", key));
    }

    private String setting(String key, String fallback) {
        return setting(key).orElse(fallback);
    }

    @Override
    public Optional<Authenticated> authenticate(AuthRequest req) {
        String name = req.header(setting("x_auth_username", "X-Auth-CouchDB-UserName"));
        if (name == null) return Optional.empty();
        String rolesHeader = req.header(setting("x_auth_roles", "X-Auth-CouchDB-Roles"));
        // re:split with trim, as couch_httpd_auth splits it: empty roles between commas are kept, trailing ones dropped (String.split's rule).
        List<String> roles = rolesHeader == null || rolesHeader.isEmpty() ? List.of() : List.of(rolesHeader.split("\\s*,\\s*"));
        boolean useSecret = setting("proxy_use_secret", "false").strip().equals("true");
        Optional<String> secret = setting("secret");
        if (useSecret && secret.isPresent()) {
            String token = req.header(setting("x_auth_token", "X-Auth-CouchDB-Token"));
            if (token == null || !matches(secret.get(), name, token)) return Optional.empty();
        }
        return Optional.of(new Authenticated(new UserCtx(name, roles, name()), null));
    }

    private boolean matches(String secret, String name, String token) {
        for (String alg : setting("hash_algorithms", "sha256, sha").split("\\s*,\\s*")) {
            String mac = switch (alg.strip().toLowerCase(Locale.ROOT)) {
                case "sha", "sha1" -> "HmacSHA1";
                case "sha224" -> "HmacSHA224";
                case "sha256" -> "HmacSHA256";
                case "sha384" -> "HmacSHA384";
                case "sha512" -> "HmacSHA512";
                default -> null;
            };
            if (mac == null) continue;
            String expected = HexFormat.of().formatHex(hmac(mac, secret, name));
            if (MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), token.getBytes(StandardCharsets.UTF_8))) return true;
        }
        return false;
    }

    private static byte[] hmac(String alg, String secret, String message) {
        try {
            Mac m = Mac.getInstance(alg);
            m.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), alg));
            return m.doFinal(message.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
