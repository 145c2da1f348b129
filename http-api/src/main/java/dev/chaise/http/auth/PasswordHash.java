package dev.chaise.http.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A stored password as CouchDB keeps it. The {@code [admins]} forms are
 * {@code -pbkdf2:<prf>-<derived key hex>,<salt>,<iterations>} (what CouchDB 3.5 writes),
 * {@code -pbkdf2-<derived>,<salt>,<iterations>} (PRF sha1, older releases) and
 * {@code -hashed-<sha1 hex>,<salt>} (the legacy "simple" scheme). The salt is used as the bytes of
 * its text, and the password as UTF-8, as in CouchDB, so hashes move between the two both ways.
 *
 * @param prf for PBKDF2: sha, sha224, sha256, sha384 or sha512
 */
public record PasswordHash(Scheme scheme, String prf, String derivedKey, String salt, int iterations) {
    public enum Scheme { PBKDF2, SIMPLE }

    private static final SecureRandom RANDOM = new SecureRandom();

    public PasswordHash {
        if (scheme == Scheme.PBKDF2) {
            hmacName(prf);
            if (iterations < 1) throw new IllegalArgumentException("iterations must be positive");
        }
    }

    /** True if an {@code [admins]} value is already hashed (left as is at start, as CouchDB does). */
    public static boolean isHashed(String value) {
        return value.startsWith("-hashed-") || value.startsWith("-pbkdf2-") || value.startsWith("-pbkdf2:");
    }

    /** Parses an {@code [admins]} value; empty if it is not one of the hashed forms (i.e. plain text). */
    public static Optional<PasswordHash> parseAdmin(String value) {
        try {
            if (value.startsWith("-hashed-")) {
                String[] p = value.substring(8).split(",", -1);
                if (p.length != 2) return Optional.empty();
                return Optional.of(new PasswordHash(Scheme.SIMPLE, "sha", p[0].toLowerCase(Locale.ROOT), p[1], 1));
            }
            String prf;
            String rest;
            if (value.startsWith("-pbkdf2-")) {
                prf = "sha";
                rest = value.substring(8);
            } else if (value.startsWith("-pbkdf2:")) {
                int dash = value.indexOf('-', 8);
                if (dash < 0) return Optional.empty();
                prf = value.substring(8, dash);
                rest = value.substring(dash + 1);
            } else {
                return Optional.empty();
            }
            String[] p = rest.split(",", -1);
            if (p.length != 3) return Optional.empty();
            return Optional.of(new PasswordHash(Scheme.PBKDF2, prf, p[0].toLowerCase(Locale.ROOT), p[1], Integer.parseInt(p[2])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Hashes a new password with a fresh random salt (32 hex digits, like CouchDB's uuids). */
    public static PasswordHash create(String password, String prf, int iterations) {
        byte[] s = new byte[16];
        RANDOM.nextBytes(s);
        String salt = HexFormat.of().formatHex(s);
        return new PasswordHash(Scheme.PBKDF2, prf, derive(prf, password, salt, iterations), salt, iterations);
    }

    /** The {@code [admins]} form. */
    public String toAdminString() {
        return switch (scheme) {
            case SIMPLE -> "-hashed-" + derivedKey + "," + salt;
            case PBKDF2 -> "-pbkdf2:" + prf + "-" + derivedKey + "," + salt + "," + iterations;
        };
    }

    /** Checks a password in constant time (for the given hash length). Costs {@code iterations} HMACs. */
    public boolean matches(String password) {
        String actual = switch (scheme) {
            case SIMPLE -> sha1Hex(password + salt);
            case PBKDF2 -> derive(prf, password, salt, iterations);
        };
        return MessageDigest.isEqual(actual.getBytes(StandardCharsets.US_ASCII), derivedKey.getBytes(StandardCharsets.US_ASCII));
    }

    static String hmacName(String prf) {
        return switch (prf) {
            case "sha" -> "HmacSHA1";
            case "sha224" -> "HmacSHA224";
            case "sha256" -> "HmacSHA256";
            case "sha384" -> "HmacSHA384";
            case "sha512" -> "HmacSHA512";
            default -> throw new IllegalArgumentException("unknown PBKDF2 PRF " + prf);
        };
    }

    /** PBKDF2 (RFC 8018) over raw bytes; the JDK's PBEKeySpec takes chars and refuses empty passwords. */
    static String derive(String prf, String password, String salt, int iterations) {
        try {
            Mac mac = Mac.getInstance(hmacName(prf));
            byte[] pw = password.getBytes(StandardCharsets.UTF_8);
            // HMAC keys may be empty; SecretKeySpec may not, so an empty password gets a one-byte 0 key, which HMAC pads identically.
            mac.init(new SecretKeySpec(pw.length == 0 ? new byte[1] : pw, mac.getAlgorithm()));
            byte[] saltBytes = salt.getBytes(StandardCharsets.UTF_8);
            // Output length is one hash (CouchDB's key length), so a single block.
            mac.update(saltBytes);
            mac.update(new byte[] {0, 0, 0, 1});
            byte[] u = mac.doFinal();
            byte[] t = u.clone();
            for (int i = 1; i < iterations; i++) {
                u = mac.doFinal(u);
                for (int j = 0; j < t.length; j++) t[j] ^= u[j];
            }
            return HexFormat.of().formatHex(t);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha1Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
