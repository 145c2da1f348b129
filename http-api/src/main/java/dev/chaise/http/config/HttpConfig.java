package dev.chaise.http.config;

/**
 * Settings read once at start (the server module builds this from the ini). Values that
 * {@code /_node/_local/_config} may change at run time live in {@link ConfigStore} instead.
 *
 * @param maxRequestSize {@code [chttpd] max_http_request_size}; bodies above it get 413. 4 GiB as in
 *     CouchDB: attachment bodies stream to storage, so only this and {@code max_attachment_size} bound them
 * @param maxBufferedBody {@code [chaise] max_buffered_body_size}: bodies read whole (JSON, forms) above it get 413,
 *     so a huge JSON body cannot exhaust the heap
 * @param idleTimeoutSeconds a connection with no request in flight and no traffic for this long is closed
 * @param nodeName what {@code _membership} and {@code _node/_local} report
 * @param adminOnlyAllDbs {@code [chttpd] admin_only_all_dbs}, true by default as in CouchDB 3
 * @param maxUuidCount {@code [uuids] max_count}
 * @param requestHeadTimeoutSeconds {@code [chttpd] request_head_timeout}: a connection whose request head
 *     (request line and headers) has begun but is not complete this long after its first byte is closed
 * @param maxConnections {@code [chttpd] max_connections}: connections past it get 503 and are closed
 */
public record HttpConfig(
        String bindAddress,
        int port,
        long maxRequestSize,
        long maxBufferedBody,
        int idleTimeoutSeconds,
        String nodeName,
        String vendorVersion,
        String gitSha,
        boolean adminOnlyAllDbs,
        int maxUuidCount,
        Auth auth,
        int requestHeadTimeoutSeconds,
        int maxConnections) {

    /** CouchDB's version whose API this server speaks. */
    public static final String COUCHDB_VERSION = "3.5.0";

    /**
     * {@code [chttpd_auth]}.
     *
     * @param timeoutSeconds cookie lifetime ({@code timeout})
     * @param iterations PBKDF2 iterations for newly hashed passwords
     * @param pbkdf2Prf PRF for newly hashed passwords: sha, sha224, sha256, sha384 or sha512
     * @param secret the cookie secret; null to use the one stored in the KV
     * @param sameSite the cookie's SameSite attribute, or "" for none
     * @param cookieDomain the cookie's Domain attribute, or "" for none
     */
    public record Auth(int timeoutSeconds, boolean allowPersistentCookies, int iterations, String pbkdf2Prf,
                       String secret, String sameSite, String cookieDomain) {
        public static Auth defaults() {
            return new Auth(600, true, 600_000, "sha256", null, "", "");
        }

        public Auth withIterations(int n) {
            return new Auth(timeoutSeconds, allowPersistentCookies, n, pbkdf2Prf, secret, sameSite, cookieDomain);
        }

        public Auth withTimeoutSeconds(int s) {
            return new Auth(s, allowPersistentCookies, iterations, pbkdf2Prf, secret, sameSite, cookieDomain);
        }
    }

    /**
     * The settings as {@code config} has them now, CouchDB's section and key names, with
     * {@code fallback}'s values where a key is missing or does not parse (a bad value set over
     * {@code _config} must not break every request).
     */
    public static HttpConfig from(ConfigStore config, HttpConfig fallback) {
        Auth a = fallback.auth();
        Auth auth = new Auth(
                num(config, "chttpd_auth", "timeout", a.timeoutSeconds()),
                bool(config, "chttpd_auth", "allow_persistent_cookies", a.allowPersistentCookies()),
                num(config, "chttpd_auth", "iterations", a.iterations()),
                config.get("chttpd_auth", "pbkdf2_prf").filter(v -> !v.isBlank()).orElse(a.pbkdf2Prf()),
                config.get("chttpd_auth", "secret").filter(v -> !v.isBlank()).orElse(a.secret()),
                config.get("chttpd_auth", "same_site").orElse(a.sameSite()),
                config.get("chttpd_auth", "cookie_domain").orElse(a.cookieDomain()));
        return new HttpConfig(
                config.get("chttpd", "bind_address").filter(v -> !v.isBlank()).orElse(fallback.bindAddress()),
                num(config, "chttpd", "port", fallback.port()),
                num(config, "chttpd", "max_http_request_size", fallback.maxRequestSize()),
                num(config, "chaise", "max_buffered_body_size", fallback.maxBufferedBody()),
                num(config, "chaise", "http_idle_timeout", fallback.idleTimeoutSeconds()),
                config.get("chaise", "node_name").filter(v -> !v.isBlank()).orElse(fallback.nodeName()),
                fallback.vendorVersion(),
                config.get("chaise", "git_sha").orElse(fallback.gitSha()),
                bool(config, "chttpd", "admin_only_all_dbs", fallback.adminOnlyAllDbs()),
                num(config, "uuids", "max_count", fallback.maxUuidCount()),
                auth,
                num(config, "chttpd", "request_head_timeout", fallback.requestHeadTimeoutSeconds()),
                num(config, "chttpd", "max_connections", fallback.maxConnections()));
    }

    private static int num(ConfigStore c, String section, String key, int fallback) {
        return (int) Math.min(Integer.MAX_VALUE, num(c, section, key, (long) fallback));
    }

    private static long num(ConfigStore c, String section, String key, long fallback) {
        try {
            return c.get(section, key).map(String::strip).map(Long::parseLong).orElse(fallback);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    private static boolean bool(ConfigStore c, String section, String key, boolean fallback) {
        return c.get(section, key).map(String::strip).map(v -> v.equals("true") ? Boolean.TRUE : v.equals("false") ? Boolean.FALSE : null)
                .orElse(fallback);
    }

    public HttpConfig withVendorVersion(String v) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, v, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public static HttpConfig defaults() {
        return new HttpConfig("127.0.0.1", 5984, 4L << 30, 64L << 20, 300, "chaise@127.0.0.1", "0.1.0", "unknown",
                true, 1000, Auth.defaults(), 60, 4096);
    }

    public HttpConfig withPort(int p) {
        return new HttpConfig(bindAddress, p, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withMaxRequestSize(long n) {
        return new HttpConfig(bindAddress, port, n, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withMaxBufferedBody(long n) {
        return new HttpConfig(bindAddress, port, maxRequestSize, n, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withIdleTimeoutSeconds(int s) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, s, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withAdminOnlyAllDbs(boolean b) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                b, maxUuidCount, auth, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withAuth(Auth a) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, a, requestHeadTimeoutSeconds, maxConnections);
    }

    public HttpConfig withRequestHeadTimeoutSeconds(int s) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, s, maxConnections);
    }

    public HttpConfig withMaxConnections(int n) {
        return new HttpConfig(bindAddress, port, maxRequestSize, maxBufferedBody, idleTimeoutSeconds, nodeName, vendorVersion, gitSha,
                adminOnlyAllDbs, maxUuidCount, auth, requestHeadTimeoutSeconds, n);
    }
}
