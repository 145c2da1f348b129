package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Who made a request, CouchDB 3 style: the handlers {@code [chttpd] authentication_handlers}
 * names, in order ({@code cookie} then {@code default}, HTTP Basic, unless configured; also
 * {@code jwt} and {@code proxy}); the first that establishes a user wins; with none, the request
 * is anonymous (there is no admin party), or, with {@code [chttpd] require_valid_user}, refused
 * with 401 "Authentication required." (not a login attempt, and not {@code /_up} with
 * {@code require_valid_user_except_for_up}). Users come from the {@link UserDirectory}s in order.
 * Failed password checks count towards CouchDB 3.4's account lockout ({@link Lockout}).
 *
 * <p>A PBKDF2 check costs hundreds of milliseconds at CouchDB's 600,000 iterations, so, like
 * CouchDB's password cache, a password that once matched a stored hash is remembered as a fast
 * salted SHA-256 until the stored hash changes.
 *
 * <p>The PBKDF2 checks themselves run on a small pool of platform threads ({@link #HASHING}), not
 * on the request's virtual thread: a virtual thread computing holds its carrier, and with one
 * carrier per core a few checks at once (failed logins, or the first requests of many clients
 * with the same password) stopped every other request for seconds. Concurrent checks of the same
 * name and password share one computation.
 */
public final class Authenticator {
    public static final String INCORRECT = "Name or password is incorrect.";
    private static final int CACHE_LIMIT = 10_000;

    private final List<UserDirectory> directories;
    private final SessionCookies cookies;
    private final dev.chaise.http.config.ConfigStore config;
    private final java.util.Map<String, AuthenticationHandler> builtIn = new java.util.LinkedHashMap<>();
    private final Lockout lockout;
    /** A user's name and stored hash, the key of a password already checked (a new hash, a new key): a record, not a string built per request. */
    private record Known(String name, PasswordHash hash) {}

    private final ConcurrentHashMap<Known, byte[]> verified = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Boolean>> checking = new ConcurrentHashMap<>();
    /** Half the cores (at least one): requests keep the rest while checks queue here. */
    private static final ExecutorService HASHING = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors() / 2),
            Thread.ofPlatform().name("pbkdf2-", 0).daemon().factory());
    /** SHA-256 fed a random salt: the fast hash of a password already checked ({@link #verified}); only ever cloned. */
    private final MessageDigest salted;
    /** CouchDB's password_hashing_fast and _slow: checks of a remembered password, and PBKDF2 computations. */
    private final dev.chaise.stats.Counter fastHashes;
    private final dev.chaise.stats.Counter slowHashes;

    /** @param stats where password checks are counted */
    public Authenticator(List<UserDirectory> directories, SessionCookies cookies, dev.chaise.http.config.ConfigStore config,
                         dev.chaise.stats.Stats stats) {
        this.directories = List.copyOf(directories);
        this.cookies = cookies;
        this.config = config;
        this.fastHashes = stats.counter("couchdb.password_hashing_fast", "number of passwords checked against the remembered fast hash");
        this.slowHashes = stats.counter("couchdb.password_hashing_slow", "number of PBKDF2 password hashes computed");
        this.lockout = new Lockout(config, System::currentTimeMillis);
        byte[] cacheSalt = new byte[16];
        new SecureRandom().nextBytes(cacheSalt);
        try {
            salted = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        salted.update(cacheSalt);
        for (AuthenticationHandler h : List.of(new JwtHandler(config, () -> System.currentTimeMillis() / 1000), new ProxyHandler(config),
                new CookieHandler(), new BasicHandler())) {
            builtIn.put(h.name(), h);
        }
    }

    private static final String DEFAULT_HANDLERS = "{chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}";
    private static final java.util.regex.Pattern SPEC = java.util.regex.Pattern.compile("\\{\\s*\\w+\\s*,\\s*(\\w+?)_\\w*\\s*}");
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Authenticator.class);

    /**
     * The handlers of {@code [chttpd] authentication_handlers}, read on every request so a change
     * through {@code _config} takes effect at once; each named, as chttpd names them, by its
     * function's first word ({@code {chttpd_auth, jwt_authentication_handler}} is {@code jwt}).
     */
    private List<AuthenticationHandler> handlers() {
        String spec = config.get("chttpd", "authentication_handlers").orElse(DEFAULT_HANDLERS);
        Handlers last = parsed;
        if (last != null && last.spec().equals(spec)) return last.list();
        List<AuthenticationHandler> out = parse(spec);
        parsed = new Handlers(spec, out);
        return out;
    }

    /** The handlers of the last setting read, kept with its text: a regex over it on every request was 1 % of a GET's CPU. */
    private record Handlers(String spec, List<AuthenticationHandler> list) {}

    private volatile Handlers parsed;

    private List<AuthenticationHandler> parse(String spec) {
        List<AuthenticationHandler> out = new ArrayList<>();
        java.util.regex.Matcher m = SPEC.matcher(spec);
        while (m.find()) {
            AuthenticationHandler h = builtIn.get(m.group(1));
            if (h == null) log.warn("[chttpd] authentication_handlers names {}, which Chaise does not have", m.group());
            else if (!out.contains(h)) out.add(h);
        }
        return List.copyOf(out);
    }

    /**
     * The {@code WWW-Authenticate} header of a 401, as chttpd's error_headers sends it: {@code [chttpd]
     * WWW-Authenticate} if set, else {@code Basic realm="server"} when a valid user is required
     * (the browser's login prompt); null for none.
     */
    public String wwwAuthenticate() {
        return config.get("chttpd", "WWW-Authenticate").orElse(requireValidUser() ? "Basic realm=\"server\"" : null);
    }

    /** {@code [chttpd] require_valid_user}: anonymous requests are refused. */
    public boolean requireValidUser() {
        return flag("chttpd", "require_valid_user");
    }

    private boolean flag(String section, String key) {
        return config.get(section, key).map(v -> v.strip().equals("true")).orElse(false);
    }

    public SessionCookies cookies() {
        return cookies;
    }

    /** {@code [chttpd_auth] authentication_db} if set, as {@code GET /_session} shows it. */
    public Optional<String> authenticationDb() {
        return config.get("chttpd_auth", "authentication_db");
    }

    /** The handler names, as {@code GET /_session} lists them. */
    public List<String> handlerNames() {
        List<String> names = new ArrayList<>();
        for (AuthenticationHandler h : handlers()) names.add(h.name());
        return names;
    }

    /** Runs the handlers; anonymous if none establishes a user. May throw 400/401/403 {@link AuthException}s. */
    public AuthenticationHandler.Authenticated authenticate(AuthRequest req) {
        for (AuthenticationHandler h : handlers()) {
            Optional<AuthenticationHandler.Authenticated> a = h.authenticate(req);
            if (a.isPresent()) return a.get();
        }
        // chttpd_auth:party_mode_handler, always last
        boolean login = req.method().equals("POST") && req.path().equals(List.of("_session"));
        boolean up = req.path().equals(List.of("_up"));
        boolean required = up ? requireValidUser() && !flag("chttpd", "require_valid_user_except_for_up")
                : requireValidUser() || flag("chttpd", "require_valid_user_except_for_up");
        if (required && !login) throw AuthException.unauthorized("Authentication required.");
        return new AuthenticationHandler.Authenticated(UserCtx.ANONYMOUS, null);
    }

    public Optional<Credentials> lookup(String name) {
        for (UserDirectory d : directories) {
            Optional<Credentials> c = d.lookup(name);
            if (c.isPresent()) return c;
        }
        return Optional.empty();
    }

    /**
     * The user if name and password match, for {@code POST /_session} and Basic, from the client at
     * {@code remoteAddress}; 403 if that user is locked out from there ({@link Lockout}).
     *
     * @param countUnknown whether a name no directory knows counts towards the lockout (as for
     *     {@code POST /_session} in CouchDB; Basic does not count it)
     */
    public Optional<Credentials> check(String name, String password, String remoteAddress, boolean countUnknown) {
        if (name == null || password == null) return Optional.empty();
        Optional<Credentials> c = lookup(name);
        String peer = Lockout.peer(remoteAddress);
        String salt = c.map(Credentials::salt).orElse("");
        if (c.isEmpty() && !countUnknown) return Optional.empty();
        if (lockout.isLocked(peer, name, salt)) throw AuthException.forbidden(Lockout.MESSAGE);
        if (c.isPresent() && matches(c.get(), password)) return c;
        lockout.failed(peer, name, salt);
        return Optional.empty();
    }

    /**
     * Counted as CouchDB counts {@code password_hashing_fast} and {@code _slow}: a password the
     * cache knows is one fast hash; one it does not is a slow hash, and one fast hash more when it
     * matches (the cache's entry).
     */
    private boolean matches(Credentials c, String password) {
        Known key = new Known(c.name(), c.password());
        byte[] fast = fastHash(password);
        byte[] known = verified.get(key);
        if (known != null) {
            fastHashes.increment();
            return MessageDigest.isEqual(known, fast);
        }
        if (!slowCheck(c, password, c.name() + '\0' + c.password().toAdminString() + '\0' + HexFormat.of().formatHex(fast))) return false;
        if (verified.size() >= CACHE_LIMIT) verified.clear();
        fastHashes.increment(); // remembered, as couch_passwords_cache:insert hashes it
        verified.put(key, fast);
        return true;
    }

    /** The PBKDF2 check, on {@link #HASHING}; one computation for concurrent checks of the same {@code key}. */
    private boolean slowCheck(Credentials c, String password, String key) {
        dev.chaise.threads.NoWaiting.check("a PBKDF2 check"); // waits for HASHING: not on an event loop (nothing counted yet)
        CompletableFuture<Boolean> f = checking.computeIfAbsent(key, k -> CompletableFuture.supplyAsync(() -> {
            slowHashes.increment();
            return c.password().matches(password);
        }, HASHING));
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking a password", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } finally {
            if (f.isDone()) checking.remove(key, f);
        }
    }

    private byte[] fastHash(String password) {
        try {
            // A copy of a digest that has taken the salt: getInstance's provider lookup cost as much as the hash.
            MessageDigest d = (MessageDigest) salted.clone();
            return d.digest(password.getBytes(StandardCharsets.UTF_8));
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A {@code Set-Cookie} starting a session for {@code c} now. */
    public String loginCookie(Credentials c, boolean secure) {
        return cookies.setCookie(cookies.value(c.name(), c.salt(), cookies.now()), secure);
    }

    public String logoutCookie(boolean secure) {
        return cookies.setCookie("", secure);
    }

    public static String cookieValue(AuthRequest req, String name) {
        String header = req.header("Cookie");
        if (header == null) return null;
        for (Cookie c : ServerCookieDecoder.LAX.decodeAll(header)) {
            if (c.name().equals(name)) return c.value();
        }
        return null;
    }

    private final class CookieHandler implements AuthenticationHandler {
        @Override
        public String name() {
            return "cookie";
        }

        @Override
        public Optional<Authenticated> authenticate(AuthRequest req) {
            String value = cookieValue(req, SessionCookies.NAME);
            if (value == null || value.isEmpty()) return Optional.empty();
            SessionCookies.Decoded d = SessionCookies.decode(value);
            Optional<Credentials> c = lookup(d.name());
            if (c.isEmpty()) return Optional.empty();
            long left = cookies.verify(d, c.get().salt());
            if (left < 0) return Optional.empty();
            // Refreshed once a tenth of its lifetime has passed, as CouchDB does.
            String refresh = left < cookies.timeoutSeconds() * 0.9
                    ? cookies.setCookie(cookies.value(d.name(), c.get().salt(), cookies.now()), false)
                    : null;
            return Optional.of(new Authenticated(c.get().userCtx(name()), refresh));
        }
    }

    private final class BasicHandler implements AuthenticationHandler {
        @Override
        public String name() {
            return "default";
        }

        @Override
        public Optional<Authenticated> authenticate(AuthRequest req) {
            String header = req.header("Authorization");
            if (header == null || header.length() < 6 || !header.regionMatches(true, 0, "Basic ", 0, 6)) return Optional.empty();
            String decoded;
            try {
                decoded = new String(Base64.getMimeDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw AuthException.badRequest("Authorization header has invalid base64 value");
            }
            int colon = decoded.indexOf(':');
            if (colon < 0) return Optional.empty();
            String name = decoded.substring(0, colon);
            String password = decoded.substring(colon + 1);
            // "_:_" is how clients say "log me out" over Basic.
            if (name.equals("_") && password.equals("_")) return Optional.empty();
            Credentials c = check(name, password, req.remoteAddress(), false).orElseThrow(() -> AuthException.unauthorized(INCORRECT));
            return Optional.of(new Authenticated(c.userCtx(name()), null));
        }
    }
}
