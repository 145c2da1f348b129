package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RouterTest {
    private final Router.Handler a = req -> Response.ok();
    private final Router.Handler b = req -> Response.ok();
    private final Router.Handler c = req -> Response.ok();
    private final Router.Handler d = req -> Response.ok();

    @Test
    void literalsWinOverPlaceholders() {
        Router r = new Router().add("GET", "/{db}", a).add("GET", "/_all_dbs", b).add("GET", "/{db}/{doc...}", c).add("GET", "/{db}/_design/{ddoc}", d);
        assertSame(b, r.match("GET", List.of("_all_dbs")).handler());
        Router.Match m = r.match("GET", List.of("things"));
        assertSame(a, m.handler());
        assertEquals(Map.of("db", "things"), m.params());
        assertSame(d, r.match("GET", List.of("x", "_design", "v")).handler());
        Router.Match rest = r.match("GET", List.of("x", "_design", "v", "att", "ach"));
        assertSame(c, rest.handler());
        assertEquals("_design/v/att/ach", rest.params().get("doc"));
    }

    @Test
    void headUsesGetAndAllowListsMethods() {
        Router r = new Router().add("GET", "/x", a).add("PUT", "/x", b);
        assertSame(a, r.match("HEAD", List.of("x")).handler());
        HttpError e = assertThrows(HttpError.class, () -> r.match("POST", List.of("x")));
        assertEquals(405, e.status());
        assertEquals("Only GET,HEAD,PUT allowed", e.reason());
        assertEquals("GET,HEAD,PUT", e.headers().get(0).value());
    }

    @Test
    void unknownPathsAre404() {
        Router r = new Router().add("GET", "/x/y", a);
        assertEquals(404, assertThrows(HttpError.class, () -> r.match("GET", List.of("x"))).status());
        assertEquals(404, assertThrows(HttpError.class, () -> r.match("GET", List.of("x", "y", "z"))).status());
    }

    @Test
    void targetParsing() {
        RequestTarget t = RequestTarget.parse("//a%2Fb//c+d/?q=1+2&r=%22x%22#frag", true);
        assertEquals(List.of("a/b", "c d"), t.path());
        assertEquals(List.of("1 2"), t.query().get("q"));
        assertEquals(List.of("\"x\""), t.query().get("r"));
        assertEquals(List.of("c+d"), RequestTarget.parse("/c+d", false).path());
        assertEquals(400, assertThrows(HttpError.class, () -> RequestTarget.parse("/a%zz", true)).status());
        assertEquals(400, assertThrows(HttpError.class, () -> RequestTarget.parse("/a%2", true)).status());
        assertEquals(400, assertThrows(HttpError.class, () -> RequestTarget.parse("/a?x=%", true)).status());
        // Bytes that are not UTF-8 become lone surrogates, which the name checks refuse with their own errors.
        assertEquals(List.of("\udcff\udcfea"), RequestTarget.parse("/%ff%fea", true).path());
        assertEquals(List.of("a\udcc3(b"), RequestTarget.parse("/a%C3%28b", true).path());
        assertEquals(List.of("é"), RequestTarget.parse("/%C3%A9", true).path());
        assertEquals(List.of("db", "x"), RequestTarget.parse("http://host:5984/db/x?a=1", true).path());
        assertEquals(List.of(), RequestTarget.parse("http://host:5984", true).path());
        assertEquals(400, assertThrows(HttpError.class, () -> RequestTarget.parse("*", true)).status());
    }
}
