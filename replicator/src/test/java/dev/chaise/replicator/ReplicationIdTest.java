package dev.chaise.replicator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.ErlangTerm;
import dev.chaise.storage.json.Json;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Replication ids against CouchDB's own: every expected id below is the md5 that Erlang/OTP 25
 * computed with {@code term_to_binary(T, [{minor_version, 1}])} for the term CouchDB 3.5's
 * couch_replicator_ids builds for that replication (the terms are in the comments), so a
 * replication Chaise runs finds checkpoints CouchDB wrote under the same server uuid, and back.
 */
class ReplicationIdTest {
    static final String UUID = "abc123";
    static final ReplicationSpec.Context CTX = new ReplicationSpec.Context("http://127.0.0.1:5985/", "", "", true, ReplicationSpec.Defaults.couchdb());

    static JsonNode json(String s) throws Exception {
        return Json.MAPPER.readTree(s);
    }

    static String id(String body) throws Exception {
        return id(body, CTX, null);
    }

    static String id(String body, ReplicationSpec.Context ctx, String code) throws Exception {
        ReplicationSpec s = ReplicationSpec.parse(json(body), ReplicationSpec.RepUser.NONE, ctx);
        String[] id = ReplicationId.compute(UUID, s, code);
        return id[0] + id[1];
    }

    /** [<<"abc123">>, {remote,"user","host",default,"/db1/",[],undefined}, {remote,undefined,"127.0.0.1",default,"/db2/",[],undefined}] */
    @Test
    void plainRemoteEndpoints() throws Exception {
        assertEquals("94de75b6ea026773cf2749aec2809073", id("{\"source\":\"http://user:pass@host/db1\",\"target\":\"http://127.0.0.1:5984/db2\"}"));
        // the password is not part of it, and credentials may come three ways
        assertEquals("94de75b6ea026773cf2749aec2809073", id("{\"source\":\"http://user:other@host/db1/\",\"target\":\"http://127.0.0.1:5984/db2/\"}"));
        assertEquals("94de75b6ea026773cf2749aec2809073", id("{\"source\":{\"url\":\"http://host/db1\",\"auth\":{\"basic\":{\"username\":\"user\",\"password\":\"p\"}}},\"target\":\"http://127.0.0.1/db2\"}"));
        String basic = "Basic " + Base64.getEncoder().encodeToString("user:x".getBytes(StandardCharsets.UTF_8));
        assertEquals("94de75b6ea026773cf2749aec2809073", id("{\"source\":{\"url\":\"http://host/db1\",\"headers\":{\"Authorization\":\"" + basic + "\"}},\"target\":\"http://127.0.0.1/db2\"}"));
        assertEquals("94de75b6ea026773cf2749aec2809073+continuous+create_target",
                id("{\"source\":\"http://user:pass@host/db1\",\"target\":\"http://127.0.0.1:5984/db2\",\"continuous\":true,\"create_target\":true}"));
        // options that do not name the replication leave it alone
        assertEquals("94de75b6ea026773cf2749aec2809073", id("{\"source\":\"http://user:pass@host/db1\",\"target\":\"http://127.0.0.1:5984/db2\",\"worker_processes\":2,\"checkpoint_interval\":5000,\"winning_revs_only\":false}"));
    }

    /** Target {remote,undefined,"127.0.0.1",15984,"/db2/",[{"X-Foo","bar"}],undefined}: a port that is not the default, a header. */
    @Test
    void portAndHeaders() throws Exception {
        assertEquals("0beff538397f76825de28a8d9fee41fb",
                id("{\"source\":\"http://user:pass@host/db1\",\"target\":{\"url\":\"http://127.0.0.1:15984/db2\",\"headers\":{\"X-Foo\":\"bar\"}}}"));
    }

    /** Filters: [[<<"a">>,<<"b/c">>,<<"é">>]] (sorted, percent-decoded), the code and query_params, the normalized selector. */
    @Test
    void filters() throws Exception {
        String ends = "\"source\":\"http://user:pass@host/db1\",\"target\":\"http://127.0.0.1:5984/db2\"";
        assertEquals("4e8ee834f18f72e4498cb0d09022e562", id("{" + ends + ",\"doc_ids\":[\"b%2Fc\",\"\u00e9\",\"a\",\"a\"]}"));
        assertEquals("e240c29039c8ba332944279421749dd9", id("{" + ends + ",\"filter\":\"d/f\",\"query_params\":{\"min\":\"5\"}}", CTX,
                "  function(doc, req) { return doc.n > req.query.min; }\n"));
        assertEquals("8a27e22a3a4c27f0e90ffca33f0eed8a", id("{" + ends + ",\"selector\":{\"a\":{\"b\":{\"$in\":[1,2,300]}}}}"));
        assertEquals("009ff8881b07068314d69757e616e8bb", id("{" + ends + ",\"selector\":{\"a\":{\"b\":\"x\"},\"z\":{\"$gt\":1.5}}}"));
        assertEquals("5f99f72c1635c76d04ffa88cfdd28a96", id("{" + ends + ",\"winning_revs_only\":true,\"since_seq\":\"42-abc\"}"));
        assertEquals("d4b228930a446bd71586e4ec68d07c0c", id("{" + ends + ",\"since_seq\":1234567890123}"));
    }

    /**
     * A local name, as CouchDB 3's _replicate turns it into http://{bind_address}:{port}/{name} with
     * the request's Authorization and Cookie: {remote,"admin","127.0.0.1",5985,"/my%2Fdb/",[{"cookie",""}],undefined};
     * signed in with a cookie: {remote,undefined,...,"/db/",[{"authorization",""},{"cookie","AuthSession=xyz"}],undefined}.
     */
    @Test
    void localNamesAsCouchDbsLoopbackUrl() throws Exception {
        String basic = "Basic " + Base64.getEncoder().encodeToString("admin:secret".getBytes(StandardCharsets.UTF_8));
        var ctx = new ReplicationSpec.Context("http://127.0.0.1:5985/", basic, "", true, ReplicationSpec.Defaults.couchdb());
        assertEquals("4b8a9ca2b0ed63a3f86c4c388debd789", id("{\"source\":\"my/db\",\"target\":\"http://127.0.0.1:5984/db2\"}", ctx, null));
        var cookie = new ReplicationSpec.Context("http://127.0.0.1:5985/", "", "AuthSession=xyz", true, ReplicationSpec.Defaults.couchdb());
        assertEquals("cc416bca51b5f144c14315d3193a6fc0", id("{\"source\":\"db\",\"target\":\"http://127.0.0.1:5984/db2\"}", cookie, null));
    }

    /** term_to_binary([<<"u">>, {remote, [252], default, 70000, -3, 1.5, [1,2], [300]}], [{minor_version, 1}]) from OTP 25. */
    @Test
    void termEncodingByteForByte() {
        Object term = List.of("u".getBytes(StandardCharsets.UTF_8), ErlangTerm.Tuple.of(new ErlangTerm.Atom("remote"), List.of(252),
                new ErlangTerm.Atom("default"), 70000, -3, 1.5, List.of(1, 2), List.of(BigInteger.valueOf(300))));
        int[] expected = {131, 108, 0, 0, 0, 2, 109, 0, 0, 0, 1, 117, 104, 8, 100, 0, 6, 114, 101, 109, 111, 116, 101, 107, 0, 1, 252, 100, 0, 7, 100,
            101, 102, 97, 117, 108, 116, 98, 0, 1, 17, 112, 98, 255, 255, 255, 253, 70, 63, 248, 0, 0, 0, 0, 0, 0, 107, 0, 2, 1, 2, 108, 0, 0, 0, 1, 98,
            0, 0, 1, 44, 106, 106};
        byte[] b = new byte[expected.length];
        for (int i = 0; i < b.length; i++) b[i] = (byte) expected[i];
        assertArrayEquals(b, ErlangTerm.encode(term));
    }

    @Test
    void badInputIsCouchDbsError() {
        ReplicationException e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"http://\",\"target\":\"http://h/db\"}"));
        assertEquals(400, e.status());
        assertEquals("invalid_replication", e.error());
        assertEquals("endpoint has an invalid url", e.reason());
        e = assertThrows(ReplicationException.class, () -> id("{\"target\":\"http://h/db\"}"));
        assertEquals("bad_request", e.error());
        e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"a\",\"target\":\"b\",\"continuous\":\"yes\"}"));
        assertEquals("parameter `continuous` must be a boolean", e.reason());
        e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"a\",\"target\":\"b\",\"doc_ids\":[\"x\"],\"filter\":\"d/f\"}"));
        assertEquals("`doc_ids`,`filter`,`selector` are mutually exclusive", e.reason());
        e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"a\",\"target\":\"b\",\"filter\":\"nofilter\"}"));
        assertEquals("Invalid filter. Must match `ddocname/filtername`.", e.reason());
        e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"a\",\"target\":\"b\",\"query_params\":{\"n\":1}}"));
        assertEquals("n value must be a string.", e.reason());
        var docCtx = new ReplicationSpec.Context("http://127.0.0.1:5985/", null, null, false, ReplicationSpec.Defaults.couchdb());
        e = assertThrows(ReplicationException.class, () -> id("{\"source\":\"local\",\"target\":\"http://h/db\"}", docCtx, null));
        assertEquals("invalid_replication", e.error());
    }

    @Test
    void differentReplicationsDifferentIds() throws Exception {
        String a = id("{\"source\":\"http://h/a\",\"target\":\"http://h/b\"}");
        assertNotEquals(a, id("{\"source\":\"http://h/b\",\"target\":\"http://h/a\"}"));
        assertNotEquals(a, id("{\"source\":\"http://h/a\",\"target\":\"http://h/b\",\"winning_revs_only\":true}"));
        assertNotEquals(a, id("{\"source\":\"http://other:pw@h/a\",\"target\":\"http://h/b\"}"));
        assertEquals("function(doc) { return true; }", ReplicationId.trimCode("\n  function(doc) { return true; }  \n"));
        assertEquals("function(doc) {\n return true;\n}\n", ReplicationId.trimCode("function(doc) {\n return true;\n}\n"), "PCRE's '.' stops at a newline: no match, left as is");
    }
}
