package dev.chaise.http;

import dev.chaise.http.config.HttpConfig;
import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.b64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.http.auth.SessionCookies;
import dev.chaise.storage.ServerMetadata;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AuthTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static String sessionCookie(HttpTestServer.Resp r) {
        String sc = r.header("Set-Cookie");
        assertNotNull(sc, "no Set-Cookie");
        assertTrue(sc.startsWith("AuthSession="), sc);
        return sc.substring(0, sc.indexOf(';'));
    }

    @Test
    void anonymousSession() throws Exception {
        var r = s.get("/_session").status(200);
        assertEquals("{\"ok\":true,\"userCtx\":{\"name\":null,\"roles\":[]},\"info\":{\"authentication_handlers\":[\"cookie\",\"default\"]}}\n", r.text());
        s.get("/_session?basic=true").error(401, "unauthorized", "Please login.");
    }

    @Test
    void basicAuthSession() throws Exception {
        var r = s.get("/_session", "Authorization", ADMIN).status(200);
        assertEquals("{\"ok\":true,\"userCtx\":{\"name\":\"admin\",\"roles\":[\"_admin\"]},\"info\":{\"authentication_handlers\":[\"cookie\",\"default\"],\"authenticated\":\"default\"}}\n", r.text());
        assertNull(r.header("Set-Cookie"));
    }

    @Test
    void wrongBasicPasswordIs401() throws Exception {
        s.get("/", "Authorization", "Basic " + b64("admin:nope")).error(401, "unauthorized", "Name or password is incorrect.");
        s.get("/", "Authorization", "Basic " + b64("nobody:x")).error(401, "unauthorized", "Name or password is incorrect.");
    }

    @Test
    void malformedAuthorizationIsAnonymous() throws Exception {
        for (String h : new String[] {"Basic", "Basic " + b64("nocolon"), "Bearer abc", "Basic " + b64("_:_"), "Digest x=y"}) {
            var r = s.get("/_session", "Authorization", h).status(200);
            assertTrue(r.json().get("userCtx").get("name").isNull(), h);
        }
    }

    @Test
    void cookieLoginWithJson() throws Exception {
        var login = s.send("POST", "/_session", "{\"name\":\"admin\",\"password\":\"pass\"}", "Content-Type", "application/json").status(200);
        assertEquals("{\"ok\":true,\"name\":\"admin\",\"roles\":[\"_admin\"]}\n", login.text());
        String setCookie = login.header("Set-Cookie");
        assertTrue(setCookie.matches("AuthSession=[A-Za-z0-9_-]+; Version=1; Expires=.+ GMT; Max-Age=600; Path=/; HttpOnly"), setCookie);
        String cookie = sessionCookie(login);

        var who = s.get("/_session", "Cookie", cookie).status(200).json();
        assertEquals("admin", who.get("userCtx").get("name").asText());
        assertEquals("cookie", who.get("info").get("authenticated").asText());
        // The cookie is a server admin's: admin-only endpoints work with it.
        assertEquals("[]", s.get("/_active_tasks", "Cookie", cookie).status(200).text().strip());
    }

    @Test
    void cookieLoginWithForm() throws Exception {
        var login = s.send("POST", "/_session", "name=bob&password=bobpw", "Content-Type", "application/x-www-form-urlencoded").status(200);
        assertEquals("{\"ok\":true,\"name\":\"bob\",\"roles\":[\"reader\"]}\n", login.text());
        var who = s.get("/_session", "Cookie", sessionCookie(login)).json();
        assertEquals("bob", who.get("userCtx").get("name").asText());
        assertEquals("[\"reader\"]", who.get("userCtx").get("roles").toString());
        // username= is CouchDB's other spelling
        s.send("POST", "/_session", "username=bob&password=bobpw", "Content-Type", "application/x-www-form-urlencoded").status(200);
    }

    @Test
    void loginFailures() throws Exception {
        var bad = s.send("POST", "/_session", "{\"name\":\"admin\",\"password\":\"wrong\"}", "Content-Type", "application/json")
                .error(401, "unauthorized", "Name or password is incorrect.");
        assertTrue(bad.header("Set-Cookie").startsWith("AuthSession=;"), bad.header("Set-Cookie"));
        s.send("POST", "/_session", "{\"name\":\"ghost\",\"password\":\"x\"}", "Content-Type", "application/json")
                .error(401, "unauthorized", "Name or password is incorrect.");
        s.send("POST", "/_session", "{\"password\":\"x\"}", "Content-Type", "application/json")
                .error(400, "bad_request", "request body must contain a username");
        s.send("POST", "/_session", "{\"name\":\"a\",\"username\":\"b\",\"password\":\"x\"}", "Content-Type", "application/json")
                .error(400, "bad_request", "request body contains different usernames");
        s.send("POST", "/_session", "name=admin&password=pass", "Content-Type", "text/plain")
                .error(415, "bad_content_type", "Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'");
        s.send("POST", "/_session", "{\"name\":", "Content-Type", "application/json").error(400, "bad_request", "invalid UTF-8 JSON");
        s.send("POST", "/_session", "[1]", "Content-Type", "application/json").error(400, "bad_request", "Request body must be a JSON object");
        s.send("POST", "/_session", "{\"name\":1,\"password\":\"x\"}", "Content-Type", "application/json").error(400, "bad_request", null);
        assertEquals("DELETE,GET,HEAD,POST", s.send("PUT", "/_session", "{}").error(405, "method_not_allowed", null).header("Allow"));
    }

    @Test
    void loginRedirects() throws Exception {
        var r = s.send("POST", "/_session?next=/somewhere", "name=admin&password=pass", "Content-Type", "application/x-www-form-urlencoded").status(302);
        // couch_httpd:absolute_uri: the path made absolute on this server.
        assertEquals(s.base + "/somewhere", r.header("Location"));
        assertNotNull(r.header("Set-Cookie"));
        var f = s.send("POST", "/_session?fail=/again", "name=admin&password=no", "Content-Type", "application/x-www-form-urlencoded")
                .error(302, "unauthorized", "Name or password is incorrect.");
        assertEquals(s.base + "/again", f.header("Location"));
        assertTrue(f.header("Set-Cookie").startsWith("AuthSession=;"), f.header("Set-Cookie"));
        // Not a path: refused rather than sending the browser elsewhere.
        s.send("POST", "/_session?next=http://elsewhere/", "name=admin&password=pass", "Content-Type", "application/x-www-form-urlencoded")
                .error(400, "bad_request", "path must begin with a /.");
        s.send("DELETE", "/_session?next=elsewhere", null).error(400, "bad_request", "path must begin with a /.");
    }

    @Test
    void logoutClearsTheCookie() throws Exception {
        var r = s.send("DELETE", "/_session", null).status(200);
        assertEquals("{\"ok\":true}\n", r.text());
        assertTrue(r.header("Set-Cookie").startsWith("AuthSession=;"), r.header("Set-Cookie"));
    }

    @Test
    void badCookies() throws Exception {
        // Not base64 of three parts: CouchDB's 400.
        s.get("/_session", "Cookie", "AuthSession=!!!").error(400, "bad_request", "Malformed AuthSession cookie. Please clear your cookies.");
        s.get("/_session", "Cookie", "AuthSession=" + b64url("admin")).error(400, "bad_request", null);
        // Well formed but forged or expired: simply not authenticated.
        String forged = b64url("admin:" + Long.toHexString(System.currentTimeMillis() / 1000).toUpperCase() + ":" + "x".repeat(32));
        assertTrue(s.get("/_session", "Cookie", "AuthSession=" + forged).status(200).json().get("userCtx").get("name").isNull());
        assertTrue(s.get("/_session", "Cookie", "AuthSession=").status(200).json().get("userCtx").get("name").isNull());
        SessionCookies c = cookies(() -> System.currentTimeMillis() / 1000);
        String salt = s.http.authenticator().lookup("admin").orElseThrow().salt();
        String expired = c.value("admin", salt, System.currentTimeMillis() / 1000 - 601);
        assertTrue(s.get("/_session", "Cookie", "AuthSession=" + expired).status(200).json().get("userCtx").get("name").isNull());
        // Signed for another user's salt: rejected.
        String wrongSalt = c.value("admin", "not-the-salt", System.currentTimeMillis() / 1000);
        assertTrue(s.get("/_session", "Cookie", "AuthSession=" + wrongSalt).status(200).json().get("userCtx").get("name").isNull());
    }

    @Test
    void cookieFormatIsCouchDbs() throws Exception {
        var login = s.send("POST", "/_session", "{\"name\":\"admin\",\"password\":\"pass\"}", "Content-Type", "application/json");
        String value = sessionCookie(login).substring("AuthSession=".length());
        byte[] raw = Base64.getUrlDecoder().decode(value);
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        String[] parts = text.split(":", 3);
        assertEquals("admin", parts[0]);
        long ts = Long.parseLong(parts[1], 16);
        assertTrue(Math.abs(ts - System.currentTimeMillis() / 1000) < 5);
        assertEquals(parts[1].toUpperCase(), parts[1]);
        assertEquals(32, parts[2].getBytes(StandardCharsets.ISO_8859_1).length); // raw HMAC-SHA256
    }

    @Test
    void agingCookieIsRefreshedFreshOneIsNot() throws Exception {
        SessionCookies c = cookies(() -> System.currentTimeMillis() / 1000);
        String salt = s.http.authenticator().lookup("admin").orElseThrow().salt();
        long now = System.currentTimeMillis() / 1000;
        var fresh = s.get("/_session", "Cookie", "AuthSession=" + c.value("admin", salt, now)).status(200);
        assertNull(fresh.header("Set-Cookie"));
        String old = c.value("admin", salt, now - 120);
        var aged = s.get("/_session", "Cookie", "AuthSession=" + old).status(200);
        assertEquals("admin", aged.json().get("userCtx").get("name").asText());
        String refreshed = sessionCookie(aged);
        assertNotEquals("AuthSession=" + old, refreshed);
        assertEquals("admin", s.get("/_session", "Cookie", refreshed).json().get("userCtx").get("name").asText());
        // An error response still carries the refresh.
        var err = s.get("/nonexistent_db", "Cookie", "AuthSession=" + old).status(404);
        assertNotNull(err.header("Set-Cookie"));
    }

    @Test
    void sha1CookiesFromOlderCouchDbAreAccepted() throws Exception {
        String secret = ServerMetadata.getOrCreate(s.kv, ServerMetadata.COOKIE_SECRET, () -> { throw new AssertionError(); });
        String salt = s.http.authenticator().lookup("admin").orElseThrow().salt();
        String msg = "admin:" + Long.toHexString(System.currentTimeMillis() / 1000).toUpperCase();
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA1");
        mac.init(new javax.crypto.spec.SecretKeySpec((secret + salt).getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
        byte[] h = mac.doFinal(msg.getBytes(StandardCharsets.UTF_8));
        byte[] prefix = (msg + ":").getBytes(StandardCharsets.UTF_8);
        byte[] all = java.util.Arrays.copyOf(prefix, prefix.length + h.length);
        System.arraycopy(h, 0, all, prefix.length, h.length);
        String value = Base64.getUrlEncoder().withoutPadding().encodeToString(all);
        assertEquals("admin", s.get("/_session", "Cookie", "AuthSession=" + value).json().get("userCtx").get("name").asText());
    }

    private static SessionCookies cookies(java.util.function.LongSupplier clock) {
        String secret = ServerMetadata.getOrCreate(s.kv, ServerMetadata.COOKIE_SECRET, () -> { throw new AssertionError(); });
        return new SessionCookies(secret, HttpConfig.Auth.defaults(), clock);
    }

    private static String b64url(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void basicAuthDoesNotSetCookies() throws Exception {
        JsonNode j = s.get("/_session", "Authorization", ADMIN).json();
        assertFalse(j.get("info").has("authentication_db"));
    }
}
