package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.b64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Behaviours of authentication, the users database and the node that CouchDB 3.5.0's Elixir suite
 * drives (issue 26), each pinned to CouchDB's status, error and body (as CouchDB 3.5.0 answers
 * them, checked against a build of it), so that they hold without the slow suite.
 */
class CouchDbSuiteAuthTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static String b64url(byte[] b) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    private static String hs256(String key, String header, String claims) throws Exception {
        String signing = b64url(header.getBytes(StandardCharsets.UTF_8)) + "." + b64url(claims.getBytes(StandardCharsets.UTF_8));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return signing + "." + b64url(mac.doFinal(signing.getBytes(StandardCharsets.US_ASCII)));
    }

    private static HttpTestServer.Resp session(String token) throws Exception {
        return s.get("/_session", "Authorization", "Bearer " + token);
    }

    private static void jwtOn() {
        s.config.set("chttpd", "authentication_handlers",
                "{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}", false);
    }

    private static void jwtOff() {
        s.config.delete("chttpd", "authentication_handlers", false);
        for (String k : new String[] {"required_claims", "roles_claim_name", "roles_claim_path", "allowed_algorithms"}) {
            if (s.config.get("jwt_auth", k).isPresent()) s.config.delete("jwt_auth", k, false);
        }
    }

    @Test
    void jwtEcTokensPairAnyCurveWithTheAlgorithmsHash() throws Exception {
        // jwtauth_test.exs "jwt auth with EC secret": one P-256 key signs ES256, ES384 and ES512 tokens.
        // jwtf (CouchDB's JWT library) hashes with the algorithm's SHA whatever the curve, and its
        // signature is R and S each padded to 256, 384 or 512 bits (der_to_jose); jose_to_der splits it in half.
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair ec = g.generateKeyPair();
        String pem = "-----BEGIN PUBLIC KEY-----\\n" + Base64.getEncoder().encodeToString(ec.getPublic().getEncoded()) + "\\n-----END PUBLIC KEY-----\\n";
        jwtOn();
        try {
            s.config.set("jwt_keys", "ec:_default", pem, false);
            long now = System.currentTimeMillis() / 1000;
            String claims = "{\"nbf\":" + (now - 60) + ",\"exp\":" + (now + 60) + ",\"sub\":\"couch@apache.org\",\"_couchdb.roles\":[\"testing\"]}";
            for (int bits : new int[] {256, 384, 512}) {
                String signing = b64url(("{\"alg\":\"ES" + bits + "\",\"typ\":\"JWT\"}").getBytes(StandardCharsets.UTF_8)) + "."
                        + b64url(claims.getBytes(StandardCharsets.UTF_8));
                Signature sig = Signature.getInstance("SHA" + bits + "withECDSAinP1363Format");
                sig.initSign(ec.getPrivate());
                sig.update(signing.getBytes(StandardCharsets.US_ASCII));
                byte[] rs = sig.sign(); // R and S, 32 bytes each on P-256
                int half = bits / 8;
                byte[] jose = new byte[2 * half];
                System.arraycopy(rs, 0, jose, half - 32, 32);
                System.arraycopy(rs, 32, jose, 2 * half - 32, 32);
                JsonNode ok = session(signing + "." + b64url(jose)).status(200).json();
                assertEquals("{\"name\":\"couch@apache.org\",\"roles\":[\"testing\"]}", ok.get("userCtx").toString(), "ES" + bits);
                assertEquals("jwt", ok.at("/info/authenticated").asText());
                // The same signature over other claims does not verify.
                String forged = signing.substring(0, signing.indexOf('.') + 1) + b64url(claims.replace("couch@apache.org", "root").getBytes(StandardCharsets.UTF_8));
                session(forged + "." + b64url(jose)).error(400, "bad_request", "Bad signature");
            }
            String es256 = b64url("{\"alg\":\"ES256\"}".getBytes(StandardCharsets.UTF_8)) + "." + b64url(claims.getBytes(StandardCharsets.UTF_8));
            session(es256 + "." + b64url(new byte[] {1, 2, 3})).error(400, "bad_request", "Bad signature");
        } finally {
            s.config.delete("jwt_keys", "ec:_default", false);
            jwtOff();
        }
    }

    @Test
    void jwtRolesClaimNameAndPath() throws Exception {
        // jwt_roles_claim_test.exs: its tokens expired on 2025-08-15 (exp 1755299410), so CouchDB 3.5.0
        // itself now answers them 401 "exp not in future" (exp is a required claim by default since 3.4).
        // Here the same shape of token, signed with this test's key, with and without exp required.
        String claims = "{\"sub\":\"1234567890\",\"exp\":1755299410,\"_couchdb.roles\":[\"r1\",\"r2\"],\"my._couchdb.roles\":[\"m1\",\"m2\"],"
                + "\"foo\":{\"bar.zonk\":{\"baz.buu\":{\"baa\":{\"baa.bee\":{\"roles\":[\"n1\",\"n2\"]}}}}}}";
        String asStrings = "{\"sub\":\"1234567890\",\"exp\":1755299410,\"_couchdb.roles\":\"s1,s2\",\"my._couchdb.roles\":\"ms1, ms2\","
                + "\"foo\":{\"bar.zonk\":{\"baz.buu\":{\"baa\":{\"baa.bee\":{\"roles\":\"ns1, ns2\"}}}}}}";
        String header = "{\"typ\":\"JWT\",\"kid\":\"k\",\"alg\":\"HS256\"}";
        String list = hs256("chaise-test-key", header, claims);
        String strings = hs256("chaise-test-key", header, asStrings);
        jwtOn();
        try {
            s.config.set("jwt_keys", "hmac:k", b64("chaise-test-key"), false);
            session(list).error(401, "unauthorized", "exp not in future");
            s.config.set("jwt_auth", "required_claims", "", false); // exp present but not required: not checked (jwtf)
            assertEquals("{\"name\":\"1234567890\",\"roles\":[\"r1\",\"r2\"]}", session(list).status(200).json().get("userCtx").toString());
            assertEquals("[\"s1\",\"s2\"]", session(strings).status(200).json().at("/userCtx/roles").toString());
            // roles_claim_name: a top-level claim whose name has dots.
            s.config.set("jwt_auth", "roles_claim_name", "my._couchdb.roles", false);
            assertEquals("[\"m1\",\"m2\"]", session(list).status(200).json().at("/userCtx/roles").toString());
            assertEquals("[\"ms1\",\"ms2\"]", session(strings).status(200).json().at("/userCtx/roles").toString());
            // roles_claim_path: nested names split at dots, "\." a dot in a name; it wins over roles_claim_name.
            s.config.set("jwt_auth", "roles_claim_path", "foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles", false);
            assertEquals("[\"n1\",\"n2\"]", session(list).status(200).json().at("/userCtx/roles").toString());
            assertEquals("[\"ns1\",\"ns2\"]", session(strings).status(200).json().at("/userCtx/roles").toString());
            s.config.delete("jwt_auth", "roles_claim_name", false);
            assertEquals("{\"name\":\"1234567890\",\"roles\":[\"n1\",\"n2\"]}", session(list).status(200).json().get("userCtx").toString());
            // A path that is not there: 404 with the first name missing.
            s.config.set("jwt_auth", "roles_claim_path", "<<foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles", false);
            session(list).error(404, "not_found", "missing json key: <<foo");
            s.config.set("jwt_auth", "roles_claim_path", "foo.bar\\.zonk.baz\\.buu.baa.baa\\.bee.roles>>", false);
            session(list).error(404, "not_found", "missing json key: roles>>");
            s.config.set("jwt_auth", "roles_claim_path", "123456", false);
            session(list).error(404, "not_found", "missing json key: 123456");
            s.config.set("jwt_auth", "roles_claim_path", "_couchdb\\.roles.x", false);
            session(list).error(404, "not_found", "json_mismatch");
        } finally {
            s.config.delete("jwt_keys", "hmac:k", false);
            jwtOff();
        }
    }

    private static long stat(String name) throws Exception {
        return s.asAdmin("GET", "/_node/_local/_stats/couchdb/" + name + "?flush=true", null).status(200).json().path("value").asLong();
    }

    @Test
    void passwordHashingIsCountedFastAndSlow() throws Exception {
        // password_cache_test.exs reads couchdb.password_hashing_slow and _fast (couch_passwords:pbkdf2
        // and couch_passwords_cache:hash count them): a password the cache does not know is a slow
        // hash, and a fast one more when it matches; one it knows is a fast hash.
        s.asAdmin("PUT", "/_users", null);
        s.asAdmin("PUT", "/_users/org.couchdb.user:pc", "{\"name\":\"pc\",\"type\":\"user\",\"roles\":[],\"password\":\"pcpw\"}").status(201);
        String wrong = "{\"name\":\"pc\",\"password\":\"nope\"}";
        String right = "{\"name\":\"pc\",\"password\":\"pcpw\"}";
        // Each read of a stat is an admin's request, a cached password: one fast hash of its own.
        record Counts(long slow, long fast) {}
        java.util.function.Supplier<Counts> read = () -> {
            try {
                long slow = stat("password_hashing_slow");
                return new Counts(slow, stat("password_hashing_fast"));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        Counts a = read.get();
        s.send("POST", "/_session", wrong, "Content-Type", "application/json").error(401, "unauthorized", "Name or password is incorrect.");
        Counts b = read.get();
        assertEquals(a.slow() + 1, b.slow());
        assertEquals(a.fast() + 2, b.fast()); // the two stat reads only
        s.send("POST", "/_session", right, "Content-Type", "application/json").status(200);
        Counts c = read.get();
        assertEquals(b.slow() + 1, c.slow());
        assertEquals(b.fast() + 3, c.fast());
        s.send("POST", "/_session", right, "Content-Type", "application/json").status(200);
        Counts d = read.get();
        assertEquals(c.slow(), d.slow());
        assertEquals(c.fast() + 3, d.fast());
    }

    @Test
    void passwordRegexpRulesNewPasswords() throws Exception {
        // users_db_test.exs "users password requirements": couch_users_db:validate_password reads
        // [couch_httpd_auth] password_regexp (or [chttpd_auth]) as an Erlang list of rules.
        s.asAdmin("PUT", "/_users", null);
        s.config.set("couch_httpd_auth", "password_regexp",
                "[{\".{10,}\"}, {\"[A-Z]+\", \"Requirement 2.\"}, {\"[a-z]+\", \"\"}, {\"\\\\d+\", \"Req 4.\"}, \"[!.,()]+\"]", false);
        try {
            String doc = "{\"name\":\"pw\",\"type\":\"user\",\"roles\":[],\"password\":\"%s\"}";
            String id = "/_users/org.couchdb.user:pw";
            s.asAdmin("PUT", id, doc.formatted("funnybone")).error(400, "bad_request", "Password does not conform to requirements.");
            s.asAdmin("PUT", id, doc.formatted("funnnnnybone")).error(400, "bad_request", "Password does not conform to requirements. Requirement 2.");
            s.asAdmin("PUT", id, doc.formatted("FUNNNNNYBONE")).error(400, "bad_request", "Password does not conform to requirements.");
            s.asAdmin("PUT", id, doc.formatted("funnnnnyBONE")).error(400, "bad_request", "Password does not conform to requirements. Req 4.");
            s.asAdmin("PUT", id, doc.formatted("funnnnnyB0N3")).error(400, "bad_request", "Password does not conform to requirements.");
            s.asAdmin("PUT", id, doc.formatted("funnnnnyB0N3!")).status(201);
            // A value that is not a list of rules, or not a term at all: the server's fault.
            s.config.set("couch_httpd_auth", "password_regexp", "{{\".{10,}\"}}", false);
            s.asAdmin("PUT", "/_users/org.couchdb.user:pw2", doc.formatted("querty").replace("\"pw\"", "\"pw2\""))
                    .error(403, "forbidden", "Server cannot hash passwords at this time.");
            s.config.set("couch_httpd_auth", "password_regexp", "[{\".{10,}\"]", false);
            s.asAdmin("PUT", "/_users/org.couchdb.user:pw2", doc.formatted("querty").replace("\"pw\"", "\"pw2\""))
                    .error(403, "forbidden", "Server cannot hash passwords at this time.");
            // [chttpd_auth] comes first.
            s.config.set("chttpd_auth", "password_regexp", "[]", false);
            s.asAdmin("PUT", "/_users/org.couchdb.user:pw2", doc.formatted("querty").replace("\"pw\"", "\"pw2\"")).status(201);
        } finally {
            s.config.delete("couch_httpd_auth", "password_regexp", false);
            s.config.delete("chttpd_auth", "password_regexp", false);
        }
    }

    @Test
    void aConflictedUserDocumentSignsNoOneIn() throws Exception {
        // users_db_test.exs "users db": chttpd_auth_cache:maybe_validate_user_creds refuses a user
        // document with conflicts, unless [chttpd_auth] allow_conflicted_user_docs.
        s.asAdmin("PUT", "/_users", null);
        String rev = s.asAdmin("PUT", "/_users/org.couchdb.user:cf", "{\"name\":\"cf\",\"type\":\"user\",\"roles\":[],\"password\":\"cfpw\"}")
                .status(201).json().path("rev").asText();
        String basic = "Basic " + b64("cf:cfpw");
        assertEquals("cf", s.get("/_session", "Authorization", basic).status(200).json().at("/userCtx/name").asText());
        ObjectNode stored = (ObjectNode) s.asAdmin("GET", "/_users/org.couchdb.user:cf", null).status(200).json();
        // Two edits of revision 1, as a replication brings them (users_db_test makes them so).
        ObjectNode one = stored.deepCopy().put("foo", "bar").put("_rev", "2-" + "a".repeat(32));
        one.putObject("_revisions").put("start", 2).putArray("ids").add("a".repeat(32)).add(rev.substring(2));
        ObjectNode two = stored.deepCopy().put("foo", "baz").put("_rev", "2-" + "b".repeat(32));
        two.putObject("_revisions").put("start", 2).putArray("ids").add("b".repeat(32)).add(rev.substring(2));
        s.asAdmin("POST", "/_users/_bulk_docs", "{\"new_edits\":false,\"docs\":[" + one + "," + two + "]}").status(201);
        assertEquals(1, s.asAdmin("GET", "/_users/org.couchdb.user:cf?conflicts=true", null).json().path("_conflicts").size());
        String reason = "User document conflicts must be resolved before the document is used for authentication purposes.";
        s.get("/_session", "Authorization", basic).error(401, "unauthorized", reason);
        s.send("POST", "/_session", "{\"name\":\"cf\",\"password\":\"cfpw\"}", "Content-Type", "application/json").error(401, "unauthorized", reason);
        s.config.set("chttpd_auth", "allow_conflicted_user_docs", "true", false);
        try {
            assertEquals("cf", s.get("/_session", "Authorization", basic).status(200).json().at("/userCtx/name").asText());
        } finally {
            s.config.delete("chttpd_auth", "allow_conflicted_user_docs", false);
        }
    }

    @Test
    void aReadShowsAtMostRevsLimitRevisions() throws Exception {
        // rev_stemming_test.exs "revs limit is kept after compaction": couch_db:make_doc cuts the
        // path to _revs_limit when a document is read, before compaction stems what is stored.
        s.asAdmin("PUT", "/sarl", null).status(201);
        String rev = null;
        for (int i = 0; i < 6; i++) {
            rev = s.asAdmin("PUT", "/sarl/bar" + (rev == null ? "" : "?rev=" + rev), "{\"n\":" + i + "}").status(201).json().path("rev").asText();
        }
        assertEquals(6, s.asAdmin("GET", "/sarl/bar?revs=true", null).json().at("/_revisions/ids").size());
        s.asAdmin("PUT", "/sarl/_revs_limit", "5").status(200);
        JsonNode revs = s.asAdmin("GET", "/sarl/bar?revs=true", null).status(200).json().get("_revisions");
        assertEquals(6, revs.path("start").asInt());
        assertEquals(5, revs.path("ids").size());
        assertEquals(rev.substring(2), revs.path("ids").get(0).asText());
        s.asAdmin("POST", "/sarl/_compact", null).status(202);
        assertEquals(5, s.asAdmin("GET", "/sarl/bar?revs=true", null).json().at("/_revisions/ids").size());
        JsonNode open = s.send("GET", "/sarl/bar?revs=true&open_revs=all", null, "Authorization", ADMIN, "Accept", "application/json").status(200).json();
        assertEquals(5, open.at("/0/ok/_revisions/ids").size());
    }

    @Test
    void versionsAndCollatorVersions() throws Exception {
        // GET /_node/_local/_versions (chttpd_node:get_versions), admins only; what runs here.
        JsonNode v = s.asAdmin("GET", "/_node/_local/_versions", null).status(200).json();
        assertEquals("graaljs", v.at("/javascript_engine/name").asText());
        assertFalse(v.at("/javascript_engine/version").asText().isEmpty());
        assertEquals("icu4j", v.at("/collation_driver/name").asText());
        String collator = v.at("/collation_driver/collator_version").asText();
        assertTrue(collator.matches("\\d+(\\.\\d+)*") && !collator.endsWith(".0"), collator); // couch_util:version_to_binary
        assertTrue(v.at("/collation_driver/library_version").asText().matches("\\d+(\\.\\d+)*"));
        assertTrue(v.at("/collation_driver/collation_algorithm_version").asText().matches("\\d+(\\.\\d+)*"));
        assertFalse(v.at("/java/version").asText().isEmpty());
        s.get("/_node/_local/_versions").error(401, "unauthorized", "You are not a server admin.");
        s.asAdmin("GET", "/_node/other@host/_versions", null).error(404, "not_found", "no such node: other@host");
        s.asAdmin("POST", "/_node/_local/_versions", "{}").error(405, "method_not_allowed", "Only GET allowed");
        // design_docs_test.exs "that we get correct design doc info back": the index's collator versions.
        s.asAdmin("PUT", "/savi", null).status(201);
        s.asAdmin("PUT", "/savi/_design/test", "{\"views\":{\"v\":{\"map\":\"function(d){emit(1,1)}\"}}}").status(201);
        JsonNode info = s.asAdmin("GET", "/savi/_design/test/_info", null).status(200).json();
        assertEquals("[\"" + collator + "\"]", info.at("/view_index/collator_versions").toString());
    }
}
