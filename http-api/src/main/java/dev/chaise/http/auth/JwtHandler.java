package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * CouchDB's {@code jwt_authentication_handler} ({@code couch_httpd_auth}, {@code jwtf}): an
 * {@code Authorization: Bearer} token signed with a key of {@code [jwt_keys]} ({@code hmac:KID}
 * base64, {@code rsa:KID} and {@code ec:KID} PEM public keys, {@code _default} when the token names
 * no {@code kid}) signs in its {@code sub}, with the roles of {@code [jwt_auth] roles_claim_path}
 * (or {@code roles_claim_name}, by default {@code _couchdb.roles}). {@code [jwt_auth]
 * required_claims} lists the claims that must be there and hold, {@code exp} by default since
 * CouchDB 3.4. The checks run in jwtf's order (header, claims, key, signature) with its reasons:
 * 400 {@code bad_request} for a token that is malformed or does not verify, 401 for one that has
 * expired ({@code exp not in future}) or is not yet valid, or names no {@code sub}.
 *
 * <p>Nimbus parses the token and verifies RS signatures. HS signatures are checked here, with
 * the JDK's HMAC: Nimbus refuses secrets under 256 bits (RFC 7518), which CouchDB accepts (its own
 * example key is "hello"); ES signatures too, as jwtf pairs curves and hashes ({@link #verifyEc}).
 */
final class JwtHandler implements AuthenticationHandler {
    private static final Set<String> ALGORITHMS = Set.of("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "HS256", "HS384", "HS512");
    private static final Set<String> CHECKS = Set.of("alg", "exp", "iat", "iss", "kid", "nbf", "sig", "typ");
    /** jwtf's claim syntax: {@code name} or {@code {name, "value"}}. */
    private static final Pattern CLAIM = Pattern.compile("([a-z]+)|\\{([a-z]+)\\s*,\\s*\"([^\"]+)\"}");

    private final ConfigStore config;
    private final LongSupplier nowSeconds;

    JwtHandler(ConfigStore config, LongSupplier nowSeconds) {
        this.config = config;
        this.nowSeconds = nowSeconds;
    }

    @Override
    public String name() {
        return "jwt";
    }

    @Override
    public Optional<Authenticated> authenticate(AuthRequest req) {
        String h = req.header("Authorization");
        if (h == null || !h.startsWith("Bearer ")) return Optional.empty();
        String token = h.substring("Bearer ".length());
        Map<String, String> checks = requiredClaims();
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) throw bad("Malformed token");
        ObjectNode header = object(parts[0]);
        String typ = text(header, "typ");
        if (checks.containsKey("typ")) {
            if (typ == null) throw bad("Missing typ header parameter");
            if (!typ.equals("JWT")) throw bad("Invalid typ header parameter");
        }
        String alg = text(header, "alg");
        if (alg == null) throw bad("Missing alg header parameter");
        if (!ALGORITHMS.contains(alg)) throw bad("Invalid alg header parameter");
        ObjectNode claims = object(parts[1]);
        validateClaims(claims, checks);
        String kid = text(header, "kid");
        if (checks.containsKey("kid") && kid == null) throw bad("Missing kid claim");
        verify(token, parts, alg, kid == null ? "_default" : kid);
        List<String> roles = roles(claims); // before sub, as couch_httpd_auth: a bad roles claim answers first
        JsonNode sub = claims.get("sub");
        if (sub == null) throw AuthException.unauthorized("Token missing sub claim.");
        // A JSON null names no one (CouchDB's name null: roles without a name); any other non-string
        // would be carried as a name that is not a string, so it is refused.
        if (!sub.isTextual() && !sub.isNull()) throw bad("Malformed token");
        return Optional.of(new Authenticated(new UserCtx(sub.isNull() ? null : sub.textValue(), roles, name()), null));
    }

    /** {@code [jwt_auth] required_claims}, with the value each must have (or "" for none); {@code alg} always. */
    private Map<String, String> requiredClaims() {
        String spec = config.get("jwt_auth", "required_claims").orElse("exp");
        Map<String, String> out = new LinkedHashMap<>();
        out.put("alg", "");
        Matcher m = CLAIM.matcher(spec);
        boolean any = false;
        while (m.find()) {
            any = true;
            String name = m.group(1) != null ? m.group(1) : m.group(2);
            if (!CHECKS.contains(name)) throw misconfigured();
            out.put(name, m.group(3) == null ? "" : m.group(3));
        }
        if (!any && !spec.isBlank()) throw misconfigured();
        return out;
    }

    private static AuthException misconfigured() {
        return new AuthException(500, "misconfigured_server", "JWT is not configured correctly");
    }

    private void validateClaims(ObjectNode claims, Map<String, String> checks) {
        if (checks.containsKey("iss")) {
            String iss = text(claims, "iss");
            if (iss == null) throw bad("Missing iss claim");
            if (!checks.get("iss").isEmpty() && !iss.equals(checks.get("iss"))) throw bad("Invalid iss claim");
        }
        if (checks.containsKey("iat")) {
            JsonNode iat = claims.get("iat");
            if (iat == null) throw bad("Missing iat claim");
            if (!iat.isIntegralNumber()) throw bad("Invalid iat claim");
        }
        long now = nowSeconds.getAsLong();
        if (checks.containsKey("nbf")) {
            JsonNode nbf = claims.get("nbf");
            if (nbf == null) throw bad("Missing nbf claim");
            if (!nbf.isNumber() || nbf.doubleValue() >= now) throw AuthException.unauthorized("nbf not in past");
        }
        if (checks.containsKey("exp")) {
            JsonNode exp = claims.get("exp");
            if (exp == null) throw bad("Missing exp claim");
            if (!exp.isNumber() || exp.doubleValue() <= now) throw AuthException.unauthorized("exp not in future");
        }
    }

    /** jwtf_keystore: the key {@code [jwt_keys] KTY:KID}, then the signature. */
    private void verify(String token, String[] parts, String alg, String kid) {
        String kty = switch (alg.substring(0, 2)) {
            case "HS" -> "hmac";
            case "RS" -> "rsa";
            case "ES" -> "ec";
            default -> throw bad("Unknown kty");
        };
        String encoded = config.get("jwt_keys", kty + ":" + kid).orElseThrow(() -> bad("Unknown kid"));
        if (kty.equals("hmac")) {
            byte[] secret;
            try {
                secret = Base64.getDecoder().decode(encoded.strip());
            } catch (IllegalArgumentException e) {
                throw bad("Not a valid key");
            }
            byte[] expected = hmac("Hmac" + "SHA" + alg.substring(2), secret, (parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            byte[] sent;
            try {
                sent = Base64.getUrlDecoder().decode(parts[2]);
            } catch (IllegalArgumentException e) {
                throw bad("Bad HMAC");
            }
            if (!MessageDigest.isEqual(expected, sent)) throw bad("Bad HMAC");
            return;
        }
        PublicKey key = publicKey(encoded, kty);
        if (kty.equals("ec")) {
            verifyEc(parts, alg, (ECPublicKey) key);
            return;
        }
        try {
            JWSVerifier v = new RSASSAVerifier((RSAPublicKey) key);
            if (!JWSObject.parse(token).verify(v)) throw bad("Bad signature");
        } catch (java.text.ParseException | JOSEException | IllegalStateException e) {
            throw bad("Bad signature");
        }
    }

    /**
     * An ES signature as jwtf checks it: R and S are the two halves of the signature, whatever
     * their length, and the hash is the algorithm's whatever the key's curve. So ES384 and ES512
     * tokens signed with a P-256 key verify (jwtf signs them so, each half padded to 384 or 512
     * bits), which Nimbus, holding to RFC 7518's pairing of curve and algorithm, refuses.
     */
    private static void verifyEc(String[] parts, String alg, ECPublicKey key) {
        byte[] sig;
        try {
            sig = Base64.getUrlDecoder().decode(parts[2]);
        } catch (IllegalArgumentException e) {
            throw bad("Bad signature");
        }
        if (sig.length == 0 || sig.length % 2 != 0) throw bad("Bad signature");
        int half = sig.length / 2;
        byte[] der = derSequence(derInteger(java.util.Arrays.copyOfRange(sig, 0, half)), derInteger(java.util.Arrays.copyOfRange(sig, half, sig.length)));
        try {
            java.security.Signature v = java.security.Signature.getInstance("SHA" + alg.substring(2) + "withECDSA");
            v.initVerify(key);
            v.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            if (!v.verify(der)) throw bad("Bad signature");
        } catch (GeneralSecurityException e) {
            throw bad("Bad signature");
        }
    }

    /** A DER INTEGER of an unsigned big-endian number. */
    private static byte[] derInteger(byte[] unsigned) {
        byte[] v = new java.math.BigInteger(1, unsigned).toByteArray();
        return derTlv(0x02, v);
    }

    private static byte[] derSequence(byte[] a, byte[] b) {
        byte[] both = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return derTlv(0x30, both);
    }

    private static byte[] derTlv(int tag, byte[] value) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else if (n < 0x100) {
            out.write(0x81);
            out.write(n);
        } else {
            out.write(0x82);
            out.write(n >> 8);
            out.write(n & 0xff);
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    /** A PEM public key (SubjectPublicKeyInfo), its newlines written {@code \n} as [jwt_keys] values hold them. */
    private static PublicKey publicKey(String pem, String kty) {
        String body = pem.replace("\\n", "\n").replaceAll("-----(BEGIN|END) PUBLIC KEY-----", "").replaceAll("\\s", "");
        try {
            PublicKey k = KeyFactory.getInstance(kty.equals("rsa") ? "RSA" : "EC").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(body)));
            return k;
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw bad(kty.equals("rsa") ? "not an RSA public key" : "not an EC public key");
        }
    }

    private static byte[] hmac(String alg, byte[] secret, byte[] message) {
        try {
            Mac mac = Mac.getInstance(alg);
            mac.init(new SecretKeySpec(secret.length == 0 ? new byte[1] : secret, alg));
            return mac.doFinal(message);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The roles, as {@code couch_httpd_auth:get_roles_claim} finds them: at {@code roles_claim_path}
     * (nested names split at {@code .}, {@code \\.} a literal dot; a name that is missing is 404
     * {@code missing json key: NAME}, a step into something that is not an object 404
     * {@code json_mismatch}), else at the top-level {@code roles_claim_name} (none there: no roles).
     * A list of strings, or one string of comma-separated roles; anything else is a malformed token.
     */
    private List<String> roles(ObjectNode claims) {
        JsonNode v;
        Optional<String> path = config.get("jwt_auth", "roles_claim_path");
        if (path.isPresent()) {
            v = claims;
            for (String step : path.get().split("(?<!\\\\)\\.", -1)) {
                String name = step.replace("\\.", ".");
                if (!v.isObject()) throw new AuthException(404, "not_found", "json_mismatch");
                v = v.get(name);
                if (v == null) throw new AuthException(404, "not_found", "missing json key: " + name);
            }
        } else {
            v = claims.get(config.get("jwt_auth", "roles_claim_name").orElse("_couchdb.roles"));
            if (v == null) return List.of();
        }
        List<String> out = new ArrayList<>();
        if (v.isTextual()) {
            // re:split with trim: empty roles between commas are kept, trailing ones dropped, as String.split does.
            return v.textValue().isEmpty() ? out : List.of(v.textValue().split("\\s*,\\s*"));
        }
        if (!v.isArray()) throw bad("Malformed token");
        for (JsonNode r : v) {
            if (!r.isTextual()) throw bad("Malformed token");
            out.add(r.textValue());
        }
        return out;
    }

    private static ObjectNode object(String b64) {
        JsonNode n;
        try {
            n = Json.MAPPER.readTree(Base64.getUrlDecoder().decode(b64));
        } catch (Exception e) {
            throw bad("Malformed token");
        }
        if (n == null || !n.isObject()) throw bad("Not an object");
        return (ObjectNode) n;
    }

    private static String text(ObjectNode o, String field) {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static AuthException bad(String reason) {
        return AuthException.badRequest(reason);
    }
}
