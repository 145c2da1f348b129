package dev.chaise.views.search;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.PurgeRequest;
import dev.chaise.storage.Storage;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.views.js.GraalJsEngine;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Nouveau's index functions, builds and queries over the KV directory, with the documents and
 * answers of CouchDB's {@code test/elixir/test/nouveau_test.exs}.
 */
class SearchIndexesTest {
    private static final String FOO_BAR = """
            function (doc) {
              index("string", "foo", doc.foo, {store: true});
              index("double", "bar", doc.bar, {store: true});
              index("stored", "baz", doc.foo);
            }""";

    private KvStore kv;
    private Storage storage;
    private GraalJsEngine js;
    private Database db;
    private SearchIndexes search;
    private List<UpdateResult> created;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        storage = new Storage(kv, "{}");
        js = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofSeconds(5), 2));
        db = storage.create("s");
        search = new SearchIndexes(storage, js, BuildListener.NONE, 8 << 20);
        created = db.updateUnchecked(List.of(
                doc("doc4", "{\"foo\":\"foo\",\"bar\":42,\"baz\":\"hello there\"}"),
                doc("doc3", "{\"foo\":\"bar\",\"bar\":12.0,\"baz\":\"hello\"}"),
                doc("doc1", "{\"foo\":\"baz\",\"bar\":0,\"baz\":\"there\"}"),
                doc("doc2", "{\"foo\":\"foobar\",\"bar\":100,\"baz\":\"hi\"}")), true);
    }

    @AfterEach
    void close() {
        search.close();
        js.close();
        storage.close();
        kv.close();
    }

    private static JsonNode parse(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static DocUpdate doc(String id, String json) {
        return DocUpdate.edit(id, null, false, (ObjectNode) parse(json));
    }

    private SearchIndexDef ddoc(String function) {
        ObjectNode body = Json.NODES.objectNode();
        body.putObject("nouveau").putObject("bar").put("default_analyzer", "standard").put("index", function);
        db.updateUnchecked(List.of(DocUpdate.edit("_design/foo", null, false, body)), true);
        return search.definition(db, "_design/foo", "bar");
    }

    private SearchRunner.Result query(SearchIndexDef def, String json) {
        return search.search(db, def, SearchRequest.fromBody(parse(json)));
    }

    private static List<String> ids(SearchRunner.Result r) {
        return r.hits().stream().map(SearchRunner.Hit::id).toList();
    }

    @Test
    void theSignatureIsSha256OfTheErlangTermNouveauHashes() {
        JsonNode body = parse("{\"nouveau\":{\"i\":{\"index\":\"f\"}}}");
        // term_to_binary({<<"standard">>, #{}, <<"f">>}, [{minor_version, 1}]), written out by hand.
        ByteArrayOutputStream t = new ByteArrayOutputStream();
        t.writeBytes(new byte[] {(byte) 131, 104, 3, 109, 0, 0, 0, 8});
        t.writeBytes("standard".getBytes(StandardCharsets.UTF_8));
        t.writeBytes(new byte[] {116, 0, 0, 0, 0, 109, 0, 0, 0, 1, 'f'});
        assertEquals(SearchIndexDef.sha256(t.toByteArray()), SearchIndexDef.parse("_design/d", body, "i").sig());
        // The analyzer is part of it; another design document with the same definition is the same index.
        JsonNode english = parse("{\"nouveau\":{\"i\":{\"index\":\"f\",\"default_analyzer\":\"english\"}}}");
        assertNotEquals(SearchIndexDef.parse("_design/d", body, "i").sig(), SearchIndexDef.parse("_design/d", english, "i").sig());
        assertEquals(SearchIndexDef.parse("_design/d", body, "i").sig(), SearchIndexDef.parse("_design/e", body, "i").sig());
        // nouveau_util's 404 and 400.
        SearchException missing = assertThrows(SearchException.class, () -> SearchIndexDef.parse("_design/d", body, "nope"));
        assertEquals(404, missing.status());
        assertEquals("nope not found.", missing.reason());
        SearchException noIndex = assertThrows(SearchException.class,
                () -> SearchIndexDef.parse("_design/d", parse("{\"nouveau\":{\"i\":{}}}"), "i"));
        assertEquals(400, noIndex.status());
    }

    @Test
    void allDocumentsByRelevanceThenIdWithStoredFields() {
        SearchIndexDef def = ddoc(FOO_BAR);
        SearchRunner.Result r = query(def, "{\"q\":\"*:*\"}");
        assertEquals(List.of("doc1", "doc2", "doc3", "doc4"), ids(r));
        assertEquals(4, r.totalHits());
        assertEquals("EQUAL_TO", r.totalHitsRelation());
        assertEquals(parse("{\"foo\":\"baz\",\"bar\":0.0,\"baz\":\"baz\"}"), r.hits().getFirst().fields());
        assertEquals("[{\"@type\":\"float\",\"value\":1.0},{\"@type\":\"string\",\"value\":\"doc1\"}]", r.hits().getFirst().order().toString());
        assertEquals(null, r.counts());
        assertEquals(List.of("doc3"), ids(query(def, "{\"q\":\"foo:bar\"}")));
    }

    @Test
    void noMoreIndexesStayOpenThanTheBoundAndAnEvictedOneReopensWithItsAnswers() throws Exception {
        search.maxIndexesOpen(2);
        ObjectNode body = Json.NODES.objectNode();
        ObjectNode nouveau = body.putObject("nouveau");
        for (String f : List.of("foo", "bar", "baz")) { // three definitions, three signatures
            nouveau.putObject(f).put("index", "function (doc) { index('string', '" + f + "', '' + doc." + f + ", {store: true}); }");
        }
        db.updateUnchecked(List.of(DocUpdate.edit("_design/three", null, false, body)), true);
        SearchIndexDef foo = search.definition(db, "_design/three", "foo");
        SearchIndexDef bar = search.definition(db, "_design/three", "bar");
        SearchIndexDef baz = search.definition(db, "_design/three", "baz");
        assertEquals(List.of("doc4"), ids(query(foo, "{\"q\":\"foo:foo\"}")));
        // A search that holds foo's reader while foo is evicted still reads it; it closes with the search's release.
        SearchIndexes.Index held = search.index(db, foo);
        org.apache.lucene.index.DirectoryReader reader = held.reader(false);
        assertEquals(List.of("doc3"), ids(query(bar, "{\"q\":\"bar:12\"}")));
        assertEquals(List.of("doc1"), ids(query(baz, "{\"q\":\"baz:there\"}")));
        assertEquals(2, search.openIndexes());
        assertTrue(held.closed(), "the least recently used index was closed");
        assertEquals(4, reader.numDocs());
        reader.decRef();
        assertEquals(0, reader.getRefCount());
        // Reopened from the KV: the same answers, and a write after the eviction is seen.
        db.updateUnchecked(List.of(doc("doc5", "{\"foo\":\"foo\",\"bar\":1}")), true);
        assertEquals(List.of("doc4", "doc5"), ids(query(foo, "{\"q\":\"foo:foo\"}")));
        assertEquals(2, search.openIndexes());
        assertTrue(search.index(db, foo) != held);
        // Lowering the bound closes the excess at once.
        search.maxIndexesOpen(1);
        assertEquals(1, search.openIndexes());
        assertEquals(List.of("doc3"), ids(query(bar, "{\"q\":\"bar:12\"}")));
    }

    @Test
    void numericRangesFollowTheLocale() {
        SearchIndexDef def = ddoc(FOO_BAR);
        assertEquals(List.of("doc3"), ids(query(def, "{\"q\":\"bar:[10.0 TO 20.0]\",\"locale\":\"us\"}")));
        // In German '.' groups thousands, so 10.0 reads as 100.
        assertEquals(List.of("doc2"), ids(query(def, "{\"q\":\"bar:[10.0 TO 20.0]\",\"locale\":\"de\"}")));
        assertEquals(List.of("doc1", "doc3"), ids(query(def, "{\"q\":\"bar:[0 TO 20]\"}")));
        assertEquals(List.of("doc2"), ids(query(def, "{\"q\":\"bar:{42 TO *]\"}")));
    }

    @Test
    void sortsByStringAndDoubleFieldsBothWays() {
        SearchIndexDef def = ddoc(FOO_BAR);
        assertEquals(List.of("doc3", "doc1", "doc4", "doc2"), ids(query(def, "{\"q\":\"*:*\",\"sort\":\"foo\"}")));
        assertEquals(List.of("doc2", "doc4", "doc1", "doc3"), ids(query(def, "{\"q\":\"*:*\",\"sort\":\"-foo\"}")));
        assertEquals(List.of("doc1", "doc3", "doc4", "doc2"), ids(query(def, "{\"q\":\"*:*\",\"sort\":[\"bar\"]}")));
        assertEquals(List.of("doc2", "doc4", "doc3", "doc1"), ids(query(def, "{\"q\":\"*:*\",\"sort\":\"-bar\"}")));
        assertEquals(400, assertThrows(SearchException.class, () -> query(def, "{\"q\":\"*:*\",\"sort\":\"baz\"}")).status());
        assertEquals(400, assertThrows(SearchException.class, () -> query(def, "{\"q\":\"*:*\",\"sort\":\"a b\"}")).status());
    }

    @Test
    void pagesFollowTheBookmarkAndAnEmptyPageKeepsIt() {
        SearchIndexDef def = ddoc(FOO_BAR);
        SearchRunner.Result p1 = query(def, "{\"q\":\"*:*\",\"limit\":2}");
        assertEquals(List.of("doc1", "doc2"), ids(p1));
        SearchRunner.Result p2 = query(def, "{\"q\":\"*:*\",\"limit\":2,\"bookmark\":\"" + p1.bookmark() + "\"}");
        assertEquals(List.of("doc3", "doc4"), ids(p2));
        SearchRunner.Result p3 = query(def, "{\"q\":\"*:*\",\"limit\":2,\"bookmark\":\"" + p2.bookmark() + "\"}");
        assertEquals(List.of(), ids(p3));
        assertEquals(p2.bookmark(), p3.bookmark());
        SearchRunner.Result s2 = query(def, "{\"q\":\"*:*\",\"limit\":3,\"sort\":\"-bar\",\"bookmark\":\""
                + query(def, "{\"q\":\"*:*\",\"limit\":1,\"sort\":\"-bar\"}").bookmark() + "\"}");
        assertEquals(List.of("doc4", "doc3", "doc1"), ids(s2));
        assertEquals(400, assertThrows(SearchException.class, () -> query(def, "{\"q\":\"*:*\",\"bookmark\":\"!!\"}")).status());
    }

    @Test
    void countsRangesAndTopN() {
        SearchIndexDef def = ddoc(FOO_BAR);
        SearchRunner.Result c = query(def, "{\"q\":\"*:*\",\"counts\":[\"foo\"]}");
        assertEquals(Map.of("foo", Map.of("bar", 1, "baz", 1, "foo", 1, "foobar", 1)), c.counts());
        String ranges = "\"ranges\":{\"bar\":[{\"label\":\"cheap\",\"max\":42},{\"label\":\"expensive\",\"min\":42,\"min_inclusive\":false}]}";
        assertEquals(Map.of("bar", Map.of("cheap", 3, "expensive", 1)), query(def, "{\"q\":\"*:*\"," + ranges + "}").ranges());
        assertEquals(Map.of("bar", Map.of("cheap", 3)), query(def, "{\"q\":\"*:*\",\"top_n\":1," + ranges + "}").ranges());
        assertEquals(Map.of("foo", Map.of("bar", 1)), query(def, "{\"q\":\"foo:bar\",\"counts\":[\"foo\"]}").counts());
    }

    @Test
    void deletionsAndPurgesLeaveTheIndexAndADocumentWhoseFunctionThrowsIsLeftOut() {
        SearchIndexDef def = ddoc("function (doc) { if (doc.foo === 'foobar') throw new Error('no'); index('text', 'default', doc.baz); }");
        assertEquals(List.of("doc1", "doc3", "doc4"), ids(query(def, "{\"q\":\"*:*\"}")));
        assertEquals(List.of("doc3", "doc4"), ids(query(def, "{\"q\":\"hello\"}"))); // BM25: the shorter field first
        assertEquals(List.of("doc4"), ids(query(def, "{\"q\":\"default:\\\"hello there\\\"\"}")));
        UpdateResult d4 = created.getFirst();
        db.updateUnchecked(List.of(DocUpdate.edit("doc4", d4.rev(), true, Json.NODES.objectNode())), true);
        assertEquals(List.of("doc1", "doc3"), ids(query(def, "{\"q\":\"*:*\"}")));
        UpdateResult d3 = created.get(1);
        db.purge(List.of(new PurgeRequest("doc3", List.of(d3.rev()))));
        assertEquals(List.of("doc1"), ids(query(def, "{\"q\":\"*:*\"}")));
        ObjectNode info = search.info(db, def);
        assertEquals(1, info.get("num_docs").asInt());
        assertEquals(db.read(r -> r.updateSeq()).toHex(), info.get("update_seq").asText());
        assertEquals(db.read(r -> r.purgeSeq()).toHex(), info.get("purge_seq").asText());
        assertTrue(info.get("disk_size").asLong() > 0);
        assertEquals(def.sig(), info.get("signature").asText());
    }

    @Test
    void updateFalseAnswersFromTheIndexAsItIs() {
        SearchIndexDef def = ddoc(FOO_BAR);
        assertEquals(0, query(def, "{\"q\":\"*:*\",\"update\":false}").totalHits()); // never built
        assertEquals(4, query(def, "{\"q\":\"*:*\"}").totalHits());
        db.updateUnchecked(List.of(doc("doc5", "{\"foo\":\"x\",\"bar\":1}")), true);
        assertEquals(4, query(def, "{\"q\":\"*:*\",\"update\":false}").totalHits());
        assertEquals(5, query(def, "{\"q\":\"*:*\"}").totalHits());
    }

    @Test
    void aFieldIndexedWithTwoTypesIsNouveausBadRequest() {
        SearchIndexDef def = ddoc("function (doc) { index('string', 'foo', 'bar', {store: true}); index('double', 'foo', 12.0, {store: true}); }");
        SearchException e = assertThrows(SearchException.class, () -> query(def, "{\"q\":\"foo:bar\"}"));
        assertEquals(400, e.status());
        assertEquals("bad_request", e.error());
    }

    @Test
    void indexChecksItsArgumentsAsNouveauDoes() {
        // Each bad call throws in the function, so the document is left out.
        for (String call : List.of("index(1, 'a', 'x')", "index('text', 2, 'x')", "index('text', '_a', 'x')", "index('double', 'a', 'x')",
                "index('string', 'a', 3)", "index('stored', 'a', {})", "index('nope', 'a', 'x')")) {
            SearchIndexDef def = ddoc("function (doc) { " + call + "; }");
            assertEquals(0, query(def, "{\"q\":\"*:*\"}").totalHits(), call);
            db.updateUnchecked(List.of(DocUpdate.edit("_design/foo", db.get("_design/foo", null, false).rev(), true, Json.NODES.objectNode())), true);
        }
        SearchIndexDef def = ddoc("function (doc) { index('stored', 'n', 1); index('stored', 's', 'x'); index('text', 'd', 'x', {store: true}); }");
        assertEquals(parse("{\"n\":1.0,\"s\":\"x\",\"d\":\"x\"}"), query(def, "{\"q\":\"d:x\",\"limit\":1}").hits().getFirst().fields());
    }

    @Test
    void buildsAreHeardAsTheyRunForActiveTasks() {
        List<String> heard = new java.util.ArrayList<>();
        SearchIndexes heardSearch = new SearchIndexes(storage, js, (dbName, ddocId, total) -> {
            heard.add("start " + dbName + " " + ddocId + " " + total);
            return new BuildListener.Build() {
                @Override
                public void done(int changes) {
                    heard.add("done " + changes);
                }

                @Override
                public void ended() {
                    heard.add("end");
                }
            };
        }, 1 << 20);
        SearchIndexDef def = ddoc(FOO_BAR);
        heardSearch.search(db, def, SearchRequest.fromBody(parse("{\"q\":\"*:*\"}")));
        // Four documents and the design document: five changes, the last left out of the index.
        assertEquals(List.of("start s _design/foo 5", "done 5", "end"), heard);
        heardSearch.close();
    }

    @Test
    void cleanupDropsEveryIndexNoDesignDocumentDefines() {
        SearchIndexDef old = ddoc(FOO_BAR);
        query(old, "{\"q\":\"*:*\"}");
        ObjectNode body = Json.NODES.objectNode();
        body.putObject("nouveau").putObject("bar").put("default_analyzer", "english").put("index", FOO_BAR);
        db.updateUnchecked(List.of(DocUpdate.edit("_design/foo", db.get("_design/foo", null, false).rev(), false, body)), true);
        SearchIndexDef now = search.definition(db, "_design/foo", "bar");
        assertEquals(4, query(now, "{\"q\":\"*:*\"}").totalHits());
        assertEquals(java.util.Set.of(old.sig(), now.sig()), db.read(r -> SearchSubspace.signatures(r.tx(), r.handle())));
        search.cleanup(db, List.of("_design/foo", "_design/gone"));
        assertEquals(java.util.Set.of(now.sig()), db.read(r -> SearchSubspace.signatures(r.tx(), r.handle())));
        assertEquals(4, query(now, "{\"q\":\"*:*\",\"update\":false}").totalHits());
    }

    @Test
    void requestParametersAreCheckedAsNouveauHttpdChecksThem() {
        assertEquals("q parameter is mandatory", assertThrows(SearchException.class, () -> SearchRequest.fromBody(parse("{}"))).reason());
        assertEquals("limit parameter must be greater than zero",
                assertThrows(SearchException.class, () -> SearchRequest.fromBody(parse("{\"q\":\"a\",\"limit\":0}"))).reason());
        assertEquals("limit parameter must be an integer",
                assertThrows(SearchException.class, () -> SearchRequest.fromQuery(Map.of("q", "a", "limit", "x")::get)).reason());
        assertEquals("query_parse_error",
                assertThrows(SearchException.class, () -> SearchRequest.fromQuery(Map.of("q", "a", "counts", "[1]")::get)).error());
        SearchRequest r = SearchRequest.fromQuery(Map.of("q", "a", "sort", "\"-foo\"", "include_docs", "true")::get);
        assertEquals(List.of("-foo"), r.sort());
        assertEquals(25, r.limit());
        assertEquals(10, r.topN());
        assertTrue(r.includeDocs());
        assertArrayEquals(new String[] {"hello", "there"}, SearchIndexes.analyze("standard", "Hello there").toArray());
        assertEquals(400, assertThrows(SearchException.class, () -> SearchIndexes.analyze("klingon", "x")).status());
    }
}
