package dev.chaise.http.auth;

import dev.chaise.http.config.HttpConfig;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * CouchDB's {@code AuthSession} cookie: base64url of {@code name:hex(unix seconds):mac}, where
 * mac is the raw HMAC of {@code name:hex(seconds)} keyed by the server secret followed by the
 * user's password salt. New cookies use HMAC-SHA256; SHA-1 ones (older CouchDB) are still
 * accepted, as with CouchDB's default {@code hash_algorithms = sha256, sha}.
 */
public final class SessionCookies {
    public static final String NAME = "AuthSession";
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);

    public record Decoded(String name, String timeHex, byte[] mac) {}

    private final java.util.function.Supplier<String> secret;
    private final java.util.function.Supplier<HttpConfig.Auth> live;
    private final LongSupplier clockSeconds;

    public SessionCookies(String secret, HttpConfig.Auth settings, LongSupplier clockSeconds) {
        this(() -> secret, () -> settings, clockSeconds);
    }

    /** With the secret and settings read at each use, so {@code [chttpd_auth]} changes apply at once. */
    public SessionCookies(java.util.function.Supplier<String> secret, java.util.function.Supplier<HttpConfig.Auth> settings, LongSupplier clockSeconds) {
        this.secret = secret;
        this.live = settings;
        this.clockSeconds = clockSeconds;
    }

    public long now() {
        return clockSeconds.getAsLong();
    }

    public int timeoutSeconds() {
        return live.get().timeoutSeconds();
    }

    /** The cookie value for {@code name}, issued at {@code timeSeconds}. */
    public String value(String name, String userSalt, long timeSeconds) {
        String message = name + ":" + Long.toHexString(timeSeconds).toUpperCase(Locale.ROOT);
        byte[] mac = hmac("HmacSHA256", userSalt, message);
        byte[] msg = (message + ":").getBytes(StandardCharsets.UTF_8);
        byte[] all = Arrays.copyOf(msg, msg.length + mac.length);
        System.arraycopy(mac, 0, all, msg.length, mac.length);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(all);
    }

    /** Splits a cookie value; a value that is not base64url of three {@code :}-parts is a 400, as in CouchDB. */
    public static Decoded decode(String value) {
        try {
            byte[] raw = Base64.getUrlDecoder().decode(value.replace('+', '-').replace('/', '_').replace("=", ""));
            int a = indexOf(raw, 0);
            int b = a < 0 ? -1 : indexOf(raw, a + 1);
            if (b < 0) throw new IllegalArgumentException("fewer than three parts");
            String name = new String(raw, 0, a, StandardCharsets.UTF_8);
            String time = new String(raw, a + 1, b - a - 1, StandardCharsets.ISO_8859_1);
            return new Decoded(name, time, Arrays.copyOfRange(raw, b + 1, raw.length));
        } catch (IllegalArgumentException e) {
            throw AuthException.badRequest("Malformed AuthSession cookie. Please clear your cookies.");
        }
    }

    private static int indexOf(byte[] b, int from) {
        for (int i = from; i < b.length; i++) if (b[i] == ':') return i;
        return -1;
    }

    /**
     * Seconds the cookie has left, or -1 if it is expired, unreadable or its MAC does not match
     * (CouchDB then treats the request as not cookie-authenticated rather than failing it).
     */
    public long verify(Decoded d, String userSalt) {
        long issued;
        try {
            issued = Long.parseLong(d.timeHex(), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
        long left = issued + live.get().timeoutSeconds() - now();
        if (left <= 0) return -1;
        String message = d.name() + ":" + d.timeHex();
        String alg = switch (d.mac().length) {
            case 32 -> "HmacSHA256";
            case 20 -> "HmacSHA1";
            default -> null;
        };
        if (alg == null || !MessageDigest.isEqual(hmac(alg, userSalt, message), d.mac())) return -1;
        return left;
    }

    /** The {@code Set-Cookie} header for a session cookie with this value ("" clears it). */
    public String setCookie(String value, boolean secure) {
        HttpConfig.Auth settings = live.get();
        StringBuilder sb = new StringBuilder(NAME).append('=').append(value).append("; Version=1");
        if (settings.allowPersistentCookies()) {
            Instant expires = Instant.ofEpochSecond(now() + settings.timeoutSeconds());
            sb.append("; Expires=").append(HTTP_DATE.format(expires.atOffset(ZoneOffset.UTC)));
            sb.append("; Max-Age=").append(settings.timeoutSeconds());
        }
        sb.append("; Path=/; HttpOnly");
        if (secure) sb.append("; Secure");
        if (!settings.cookieDomain().isEmpty()) sb.append("; Domain=").append(settings.cookieDomain());
        switch (settings.sameSite().toLowerCase(Locale.ROOT)) {
            case "none" -> sb.append("; SameSite=None");
            case "lax" -> sb.append("; SameSite=Lax");
            case "strict" -> sb.append("; SameSite=Strict");
            default -> { }
        }
        return sb.toString();
    }

    private byte[] hmac(String alg, String userSalt, String message) {
        try {
            byte[] salt = userSalt == null ? new byte[0] : userSalt.getBytes(StandardCharsets.UTF_8);
            byte[] secret = this.secret.get().getBytes(StandardCharsets.UTF_8);
            byte[] key = Arrays.copyOf(secret, secret.length + salt.length);
            System.arraycopy(salt, 0, key, secret.length, salt.length);
            Mac mac = Mac.getInstance(alg);
            mac.init(new SecretKeySpec(key, alg));
            return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A fresh random secret: 32 hex digits, as CouchDB's generated one. */
    public static String newSecret() {
        byte[] b = new byte[16];
        new java.security.SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
