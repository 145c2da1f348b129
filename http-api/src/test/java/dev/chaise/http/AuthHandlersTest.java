package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.b64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSObject;
import com.nimbusds.jose.Payload;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The other ways CouchDB 3 signs users in and keeps them out: JWT ({@code [jwt_auth]},
 * {@code [jwt_keys]}), proxy authentication, {@code [chttpd] require_valid_user} and 3.4's account
 * lockout ({@code [chttpd_auth_lockout]}), each as CouchDB configures it and answers, with a bad
 * token, a forged header, an expired claim and a locked account.
 */
class AuthHandlersTest {
    static HttpTestServer s;
    static KeyPair rsa;
    static KeyPair ec;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        rsa = g.generateKeyPair();
        KeyPairGenerator e = KeyPairGenerator.getInstance("EC");
        e.initialize(new ECGenParameterSpec("secp256r1"));
        ec = e.generateKeyPair();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @AfterEach
    void resetConfig() {
        for (String[] k : new String[][] {{"chttpd", "authentication_handlers"}, {"chttpd", "require_valid_user"},
                {"chttpd", "require_valid_user_except_for_up"}, {"chttpd_auth", "proxy_use_secret"}, {"chttpd_auth", "secret"},
                {"jwt_auth", "required_claims"}, {"jwt_auth", "roles_claim_path"}, {"chttpd_auth_lockout", "mode"},
                {"chttpd_auth_lockout", "max_lifetime"}}) {
            s.config.delete(k[0], k[1], false);
        }
    }

    static void handlers(String... names) {
        StringBuilder sb = new StringBuilder();
        for (String n : names) sb.append(sb.isEmpty() ? "" : ", ").append("{chttpd_auth, ").append(n).append("_authentication_handler}");
        s.config.set("chttpd", "authentication_handlers", sb.toString(), false);
    }

    static String b64url(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** An HS256 token, signed with the JDK (the key may be shorter than JOSE libraries allow, as CouchDB's own example). */
    static String hs256(String secret, String header, String claims) throws Exception {
        String signing = b64url(header.getBytes(StandardCharsets.UTF_8)) + "." + b64url(claims.getBytes(StandardCharsets.UTF_8));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return signing + "." + b64url(mac.doFinal(signing.getBytes(StandardCharsets.US_ASCII)));
    }

    static long now() {
        return System.currentTimeMillis() / 1000;
    }

    static String pem(KeyPair kp) {
        return "-----BEGIN PUBLIC KEY-----\\n" + Base64.getEncoder().encodeToString(kp.getPublic().getEncoded()) + "\\n-----END PUBLIC KEY-----\\n";
    }

    static HttpTestServer.Resp session(String... headers) throws Exception {
        return s.send("GET", "/_session", null, headers);
    }

    @Test
    void jwt() throws Exception {
        handlers("jwt", "cookie", "default");
        s.config.set("jwt_keys", "hmac:_default", b64("hello"), false);
        s.config.set("jwt_keys", "rsa:k1", pem(rsa), false);
        s.config.set("jwt_keys", "ec:k2", pem(ec), false);
        String claims = "{\"sub\":\"jan\",\"exp\":" + (now() + 600) + ",\"_couchdb.roles\":[\"reader\",\"staff\"]}";
        JsonNode ok = session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\",\"typ\":\"JWT\"}", claims)).status(200).json();
        assertEquals("{\"name\":\"jan\",\"roles\":[\"reader\",\"staff\"]}", ok.get("userCtx").toString());
        assertEquals("jwt", ok.at("/info/authenticated").asText());
        assertEquals("[\"jwt\",\"cookie\",\"default\"]", ok.at("/info/authentication_handlers").toString());
        // RS256 and ES256, by kid.
        JWSObject rs = new JWSObject(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(), new Payload(claims));
        rs.sign(new RSASSASigner(rsa.getPrivate()));
        assertEquals("jan", session("Authorization", "Bearer " + rs.serialize()).status(200).json().at("/userCtx/name").asText());
        JWSObject es = new JWSObject(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID("k2").build(), new Payload(claims));
        es.sign(new ECDSASigner((ECPrivateKey) ec.getPrivate()));
        assertEquals("jan", session("Authorization", "Bearer " + es.serialize()).status(200).json().at("/userCtx/name").asText());
        // The member roles give access.
        s.asAdmin("PUT", "/jwtdb", null).status(201);
        s.asAdmin("PUT", "/jwtdb/_security", "{\"members\":{\"roles\":[\"staff\"]}}").status(200);
        s.send("GET", "/jwtdb", null, "Authorization", "Bearer " + rs.serialize()).status(200);

        // A bad token: jwtf's 400s.
        String tampered = rs.serialize().substring(0, rs.serialize().lastIndexOf('.') + 1) + b64url(new byte[256]);
        session("Authorization", "Bearer " + tampered).error(400, "bad_request", "Bad signature");
        session("Authorization", "Bearer " + hs256("wrong", "{\"alg\":\"HS256\"}", claims)).error(400, "bad_request", "Bad HMAC");
        session("Authorization", "Bearer abc.def").error(400, "bad_request", "Malformed token");
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"none\"}", claims)).error(400, "bad_request", "Invalid alg header parameter");
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\",\"kid\":\"nokey\"}", claims)).error(400, "bad_request", "Unknown kid");
        // An expired claim: 401. CouchDB 3.4 requires exp by default.
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\"}", "{\"sub\":\"jan\",\"exp\":" + (now() - 10) + "}"))
                .error(401, "unauthorized", "exp not in future");
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\"}", "{\"sub\":\"jan\"}")).error(400, "bad_request", "Missing exp claim");
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\"}", "{\"exp\":" + (now() + 60) + "}"))
                .error(401, "unauthorized", "Token missing sub claim.");
        // required_claims and the roles claim's path.
        s.config.set("jwt_auth", "required_claims", "exp, {iss, \"chaise\"}", false);
        session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\"}", claims)).error(400, "bad_request", "Missing iss claim");
        s.config.set("jwt_auth", "required_claims", "", false);
        s.config.set("jwt_auth", "roles_claim_path", "my.nested._couchdb\\.roles", false);
        JsonNode nested = session("Authorization", "Bearer " + hs256("hello", "{\"alg\":\"HS256\"}",
                "{\"sub\":\"kim\",\"my\":{\"nested\":{\"_couchdb.roles\":\"a, b\"}}}")).status(200).json();
        assertEquals("{\"name\":\"kim\",\"roles\":[\"a\",\"b\"]}", nested.get("userCtx").toString());
    }

    @Test
    void jwtIsOffUnlessConfigured() throws Exception {
        s.config.set("jwt_keys", "hmac:_default", b64("hello"), false);
        String token = hs256("hello", "{\"alg\":\"HS256\"}", "{\"sub\":\"jan\",\"exp\":" + (now() + 600) + "}");
        JsonNode anon = session("Authorization", "Bearer " + token).status(200).json();
        assertTrue(anon.at("/userCtx/name").isNull());
        assertEquals("[\"cookie\",\"default\"]", anon.at("/info/authentication_handlers").toString());
    }

    @Test
    void proxy() throws Exception {
        handlers("proxy", "cookie", "default");
        JsonNode p = session("X-Auth-CouchDB-UserName", "pete", "X-Auth-CouchDB-Roles", "a, b").status(200).json();
        assertEquals("{\"name\":\"pete\",\"roles\":[\"a\",\"b\"]}", p.get("userCtx").toString());
        assertEquals("proxy", p.at("/info/authenticated").asText());
        assertEquals("[\"proxy\",\"cookie\",\"default\"]", p.at("/info/authentication_handlers").toString());
        // With a secret, a forged header (no token, a wrong one) signs no one in: the next handlers try.
        s.config.set("chttpd_auth", "proxy_use_secret", "true", false);
        s.config.set("chttpd_auth", "secret", "s3cret", false);
        assertTrue(session("X-Auth-CouchDB-UserName", "pete").status(200).json().at("/userCtx/name").isNull());
        assertTrue(session("X-Auth-CouchDB-UserName", "pete", "X-Auth-CouchDB-Token", "00ff").status(200).json().at("/userCtx/name").isNull());
        assertEquals("bob", session("X-Auth-CouchDB-UserName", "pete", "X-Auth-CouchDB-Token", "00ff", "Authorization", HttpTestServer.BOB)
                .status(200).json().at("/userCtx/name").asText());
        for (String alg : new String[] {"HmacSHA256", "HmacSHA1"}) {
            Mac mac = Mac.getInstance(alg);
            mac.init(new SecretKeySpec("s3cret".getBytes(StandardCharsets.UTF_8), alg));
            String token = HexFormat.of().formatHex(mac.doFinal("pete".getBytes(StandardCharsets.UTF_8)));
            assertEquals("pete", session("X-Auth-CouchDB-UserName", "pete", "X-Auth-CouchDB-Token", token).status(200).json().at("/userCtx/name").asText());
        }
        // Not configured: the headers mean nothing.
        s.config.delete("chttpd", "authentication_handlers", false);
        assertTrue(session("X-Auth-CouchDB-UserName", "pete").status(200).json().at("/userCtx/name").isNull());
    }

    @Test
    void requireValidUser() throws Exception {
        s.config.set("chttpd", "require_valid_user", "true", false);
        // chttpd_auth:party_mode_handler: 401, with the browser's login prompt (chttpd:error_headers).
        var r = s.get("/").error(401, "unauthorized", "Authentication required.");
        assertEquals("Basic realm=\"server\"", r.header("WWW-Authenticate"));
        s.get("/_up").error(401, "unauthorized", "Authentication required.");
        s.get("/", "Authorization", HttpTestServer.BOB).status(200);
        // A login attempt is always let through.
        s.send("POST", "/_session", "{\"name\":\"bob\",\"password\":\"bobpw\"}", "Content-Type", "application/json").status(200);
        // require_valid_user_except_for_up
        s.config.delete("chttpd", "require_valid_user", false);
        s.config.set("chttpd", "require_valid_user_except_for_up", "true", false);
        s.get("/_up").status(200);
        s.get("/").error(401, "unauthorized", "Authentication required.");
        s.config.delete("chttpd", "require_valid_user_except_for_up", false);
        assertNull(s.get("/_all_dbs").error(401, "unauthorized", "You are not a server admin.").header("WWW-Authenticate"));
    }

    @Test
    void lockout() throws Exception {
        // couch_auth_lockout: on by default (enforce), 5 failures from one address lock that user out.
        String wrong = "Basic " + b64("eve:nope");
        for (int i = 0; i < 5; i++) s.get("/_session", "Authorization", wrong).error(401, "unauthorized", "Name or password is incorrect.");
        s.get("/_session", "Authorization", HttpTestServer.EVE).error(403, "forbidden", "Account is temporarily locked due to multiple authentication failures");
        s.send("POST", "/_session", "{\"name\":\"eve\",\"password\":\"evepw\"}", "Content-Type", "application/json")
                .error(403, "forbidden", "Account is temporarily locked due to multiple authentication failures");
        // Only that user.
        s.get("/_session", "Authorization", HttpTestServer.BOB).status(200);
        // mode = off: no lockout; warn: logged only.
        s.config.set("chttpd_auth_lockout", "mode", "warn", false);
        assertEquals("eve", s.get("/_session", "Authorization", HttpTestServer.EVE).status(200).json().at("/userCtx/name").asText());
        s.config.delete("chttpd_auth_lockout", "mode", false);
        s.get("/_session", "Authorization", HttpTestServer.EVE).error(403, "forbidden", null);
        // It ends max_lifetime after the first failure.
        s.config.set("chttpd_auth_lockout", "max_lifetime", "1", false);
        Thread.sleep(5);
        assertEquals("eve", s.get("/_session", "Authorization", HttpTestServer.EVE).status(200).json().at("/userCtx/name").asText());
        // POST /_session counts failures too, even for names no one has.
        s.config.delete("chttpd_auth_lockout", "max_lifetime", false);
        for (int i = 0; i < 5; i++) {
            s.send("POST", "/_session", "{\"name\":\"ghost\",\"password\":\"x\"}", "Content-Type", "application/json").error(401, "unauthorized", null);
        }
        s.send("POST", "/_session", "{\"name\":\"ghost\",\"password\":\"x\"}", "Content-Type", "application/json").error(403, "forbidden", null);
    }
}
