package dev.chaise.views.search;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.PurgeRequest;
import dev.chaise.storage.RevId;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DocOps;
import dev.chaise.views.js.GraalJsEngine;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexOutput;
import org.junit.jupiter.api.Test;

/**
 * Random documents written, updated, deleted and purged; after each round the index answers
 * term, phrase, range and facet queries exactly as a brute-force pass over the documents does.
 * Some rounds "crash" a build first (a writer that flushed segments and half a file, then
 * vanished without committing) and continue on a new process's {@link SearchIndexes}: what a
 * kill -9 leaves behind must change no answer.
 */
class SearchModelTest {
    private static final String[] TAGS = {"red", "green", "blue", "gold"};
    private static final String[] WORDS = {"alpha", "beta", "gamma", "delta", "omega"};
    private static final String FUNCTION = """
            function (doc) {
              if (doc.skip) throw new Error('skipped');
              index('string', 'tag', doc.tag, {store: true});
              index('double', 'n', doc.n);
              index('text', 'body', doc.body);
            }""";

    record Doc(String tag, double n, String body, boolean skip) {}

    @Test
    void queriesEqualBruteForceAcrossWritesDeletesPurgesAndCrashes() throws Exception {
        for (long seed = 1; seed <= 3; seed++) run(seed);
    }

    private void run(long seed) throws Exception {
        Random rnd = new Random(seed);
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage storage = new Storage(kv, "{}");
             GraalJsEngine js = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofSeconds(5), 2))) {
            Database db = storage.create("m");
            ObjectNode ddoc = Json.NODES.objectNode();
            ddoc.putObject("nouveau").putObject("i").put("index", FUNCTION);
            db.updateUnchecked(List.of(DocUpdate.edit("_design/m", null, false, ddoc)), true);
            SearchIndexes search = new SearchIndexes(storage, js, BuildListener.NONE, 4 << 20);
            Map<String, Doc> model = new TreeMap<>();
            for (int round = 0; round < 8; round++) {
                for (int op = 0; op < 25; op++) {
                    String id = "d" + rnd.nextInt(30);
                    RevId cur = DocOps.current(db, id);
                    int kind = rnd.nextInt(10);
                    if (cur != null && kind == 0) {
                        db.updateUnchecked(List.of(DocUpdate.edit(id, cur, true, Json.NODES.objectNode())), true);
                        model.remove(id);
                    } else if (cur != null && kind == 1) {
                        db.purge(List.of(new PurgeRequest(id, List.of(cur))));
                        model.remove(id);
                    } else {
                        Doc d = new Doc(TAGS[rnd.nextInt(TAGS.length)], rnd.nextInt(10), sentence(rnd), rnd.nextInt(15) == 0);
                        ObjectNode body = Json.NODES.objectNode().put("tag", d.tag()).put("n", d.n()).put("body", d.body());
                        if (d.skip()) body.put("skip", true);
                        db.updateUnchecked(List.of(DocUpdate.edit(id, cur, false, body)), true);
                        model.put(id, d);
                    }
                }
                if (round % 3 == 1) {
                    crashABuild(db, search.definition(db, "_design/m", "i"));
                    search.close();
                    search = new SearchIndexes(storage, js, BuildListener.NONE, 4 << 20); // the restarted process
                }
                check(db, search, model, rnd, "seed " + seed + " round " + round);
            }
            search.close();
        }
    }

    private static String sentence(Random rnd) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) sb.append(i == 0 ? "" : " ").append(WORDS[rnd.nextInt(WORDS.length)]);
        return sb.toString();
    }

    /** What a build killed mid-way leaves in the KV: flushed segments, half a file, no commit. */
    private static void crashABuild(Database db, SearchIndexDef def) throws Exception {
        KvDirectory dir = new KvDirectory(db, def.sig(), new BlockCache(1 << 20));
        IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(new StandardAnalyzer()).setCommitOnClose(false));
        for (int i = 0; i < 50; i++) {
            Document d = new Document();
            d.add(new StringField(IndexedFields.ID, "junk" + i, Field.Store.YES));
            d.add(new org.apache.lucene.document.SortedDocValuesField(IndexedFields.ID, new org.apache.lucene.util.BytesRef("junk" + i)));
            d.add(new org.apache.lucene.document.KeywordField("tag", "red", Field.Store.YES));
            w.addDocument(d);
        }
        w.flush();
        IndexOutput half = dir.createOutput("_zz.fdt", IOContext.DEFAULT);
        half.writeBytes(new byte[KvDirectory.FLUSH_BYTES + 7], 0, KvDirectory.FLUSH_BYTES + 7);
        // The process dies: neither the writer nor the output is closed.
    }

    private static void check(Database db, SearchIndexes search, Map<String, Doc> model, Random rnd, String what) {
        SearchIndexDef def = search.definition(db, "_design/m", "i");
        Map<String, Doc> live = new TreeMap<>();
        model.forEach((id, d) -> {
            if (!d.skip()) live.put(id, d);
        });
        String tag = TAGS[rnd.nextInt(TAGS.length)];
        expect(search, db, def, "tag:" + tag, live, d -> d.tag().equals(tag), what);
        String w = WORDS[rnd.nextInt(WORDS.length)];
        expect(search, db, def, "body:" + w, live, d -> List.of(d.body().split(" ")).contains(w), what);
        String w1 = WORDS[rnd.nextInt(WORDS.length)];
        String w2 = WORDS[rnd.nextInt(WORDS.length)];
        expect(search, db, def, "body:\"" + w1 + " " + w2 + "\"", live, d -> (" " + d.body() + " ").contains(" " + w1 + " " + w2 + " "), what);
        int lo = rnd.nextInt(10);
        int hi = lo + rnd.nextInt(5);
        expect(search, db, def, "n:[" + lo + " TO " + hi + "}", live, d -> d.n() >= lo && d.n() < hi, what);
        expect(search, db, def, "tag:" + tag + " AND n:[" + lo + " TO *]", live, d -> d.tag().equals(tag) && d.n() >= lo, what);
        // Counts over every document, and the same as a facet of the whole index.
        SearchRunner.Result all = search.search(db, def, SearchRequest.fromBody(Json.NODES.objectNode().put("q", "*:*").put("limit", 1000)
                .put("top_n", 100).set("counts", Json.NODES.arrayNode().add("tag"))));
        Map<String, Integer> counts = new HashMap<>();
        for (Doc d : live.values()) counts.merge(d.tag(), 1, Integer::sum);
        Map<String, Integer> got = new HashMap<>();
        all.counts().get("tag").forEach((k, v) -> got.put(k, v.intValue()));
        assertEquals(counts, got, what + " counts");
        assertEquals(live.keySet(), new TreeSet<>(all.hits().stream().map(SearchRunner.Hit::id).toList()), what + " *:*");
    }

    private static void expect(SearchIndexes search, Database db, SearchIndexDef def, String q, Map<String, Doc> live, Predicate<Doc> p, String what) {
        Set<String> want = new TreeSet<>();
        live.forEach((id, d) -> {
            if (p.test(d)) want.add(id);
        });
        SearchRunner.Result r = search.search(db, def, SearchRequest.fromBody(Json.NODES.objectNode().put("q", q).put("limit", 1000)));
        assertEquals(want, new TreeSet<>(r.hits().stream().map(SearchRunner.Hit::id).toList()), what + ": " + q);
        assertEquals(want.size(), r.totalHits(), what + ": total_hits of " + q);
    }
}
