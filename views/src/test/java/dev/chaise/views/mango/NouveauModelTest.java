package dev.chaise.views.mango;

import static dev.chaise.views.mango.MangoModelTest.delete;
import static dev.chaise.views.mango.MangoModelTest.id;
import static dev.chaise.views.mango.MangoModelTest.json;
import static dev.chaise.views.mango.MangoModelTest.op;
import static dev.chaise.views.mango.MangoModelTest.scan;
import static dev.chaise.views.mango.MangoModelTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.Storage;
import dev.chaise.storage.UserCtx;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DocOps;
import dev.chaise.views.ViewsModule;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Model-based: random documents whose fields keep one type each (a number, a string of any case
 * with spaces and Lucene's special characters, an array of strings, a boolean, a nested number,
 * a null), random selectors over every operator with arguments of the field's type, and
 * a Mango {@code nouveau} index over all fields: each {@code _find} on it must return exactly the
 * documents the selector matches, as the index is kept up to date through writes and deletes. So
 * the Lucene query written from a selector never misses a document (the selector then removes
 * the extra ones). Comparisons across types are left out: a nouveau index compares within a
 * type, as CouchDB's does, where a JSON index collates all of them.
 */
class NouveauModelTest {
    static final List<String> WORDS = List.of("apple", "Apple", "a b", "x+y", "(c)", "say \"hi\"", "z:1", "é", "", "room 2", "back\\slash");

    @Test
    void findOnANouveauIndexEqualsTheSelector() {
        for (long seed = 7; seed <= 9; seed++) run(seed);
    }

    private static void run(long seed) {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
             Storage store = new Storage(kv, "{}")) {
            DocOps.retry(() -> store.create("nm"));
            Database db = store.open("nm");
            ViewsModule views = new ViewsModule(store, null);
            Mango mango = new Mango(views.queries(), views.search(), new dev.chaise.stats.Stats());
            Random rnd = new Random(seed);
            for (int i = 0; i < 80; i++) write(db, id(i), doc(rnd));
            mango.indexes().create(db.openFor(UserCtx.server("test"), SecuredDb.Level.MEMBER),
                    json("{\"type\":\"nouveau\",\"index\":{},\"ddoc\":\"nv\",\"name\":\"nv\"}"));
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 25; i++) {
                    String id = id(rnd.nextInt(100));
                    if (rnd.nextInt(5) == 0) delete(db, id);
                    else write(db, id, doc(rnd));
                }
                Map<String, ObjectNode> docs = scan(db);
                for (int q = 0; q < 150; q++) {
                    JsonNode sel = selector(rnd, 0);
                    Selector s = Selector.parse(sel);
                    if (s.isEmpty()) continue;
                    TreeSet<String> expected = new TreeSet<>();
                    if (!TextQuery.convert(s).isEmpty()) for (ObjectNode d : docs.values()) if (s.matches(d)) expected.add(d.get("_id").textValue());
                    ObjectNode body = Json.NODES.objectNode();
                    body.set("selector", sel);
                    body.put("use_index", "nv").put("limit", 200);
                    TreeSet<String> got = new TreeSet<>();
                    for (ObjectNode d : mango.find(db, body).docs()) got.add(d.get("_id").textValue());
                    assertEquals(expected, got, "seed " + seed + " round " + round + " query " + q + ": " + sel + " as " + TextQuery.convert(s));
                }
            }
            views.close();
        }
    }

    static ObjectNode doc(Random r) {
        ObjectNode d = Json.NODES.objectNode();
        if (r.nextInt(6) > 0) d.set("n", r.nextBoolean() ? Json.NODES.numberNode(r.nextInt(30) - 5) : Json.NODES.numberNode(r.nextInt(300) / 8.0));
        if (r.nextInt(4) == 0) d.putNull("z");
        if (r.nextInt(6) > 0) d.put("s", word(r));
        if (r.nextBoolean()) {
            ArrayNode t = d.putArray("tags");
            for (int i = r.nextInt(4); i > 0; i--) t.add(word(r));
        }
        if (r.nextBoolean()) d.put("flag", r.nextBoolean());
        if (r.nextBoolean()) d.putObject("c").put("x", r.nextInt(5));
        return d;
    }

    static String word(Random r) {
        return WORDS.get(r.nextInt(WORDS.size()));
    }

    static JsonNode selector(Random r, int depth) {
        int k = depth >= 2 ? 0 : r.nextInt(9);
        return switch (k) {
            case 6 -> {
                ArrayNode a = Json.NODES.arrayNode();
                for (int i = 1 + r.nextInt(3); i > 0; i--) a.add(selector(r, depth + 1));
                yield Json.NODES.objectNode().set(List.of("$and", "$or", "$nor").get(r.nextInt(3)), a);
            }
            case 7 -> Json.NODES.objectNode().set("$not", selector(r, depth + 1));
            default -> {
                String f = List.of("n", "s", "tags", "flag", "c.x", "c", "z").get(r.nextInt(7));
                yield Json.NODES.objectNode().set(f, condition(r, f));
            }
        };
    }

    /** An operator with an argument of the field's type. */
    static JsonNode condition(Random r, String f) {
        JsonNode v = switch (f) {
            case "n" -> r.nextBoolean() ? Json.NODES.numberNode(r.nextInt(30) - 5) : Json.NODES.numberNode(r.nextInt(300) / 8.0);
            case "c.x" -> Json.NODES.numberNode(r.nextInt(5));
            case "flag" -> Json.NODES.booleanNode(r.nextBoolean());
            case "c" -> Json.NODES.objectNode().put("x", r.nextInt(5));
            case "z" -> Json.NODES.nullNode();
            default -> Json.NODES.textNode(word(r));
        };
        boolean ordered = v.isNumber() || v.isTextual();
        if (f.equals("tags")) {
            return switch (r.nextInt(7)) {
                case 0 -> op("$elemMatch", op("$eq", v));
                case 1 -> op("$all", Json.NODES.arrayNode().add(v).add(word(r)));
                case 2 -> op("$size", Json.NODES.numberNode(r.nextInt(3)));
                case 3 -> op("$in", Json.NODES.arrayNode().add(v).add(word(r)));
                case 4 -> op("$exists", Json.NODES.booleanNode(r.nextBoolean()));
                case 5 -> op("$eq", Json.NODES.arrayNode().add(v));
                default -> {
                    String w = word(r);
                    yield op("$allMatch", op("$beginsWith", Json.NODES.textNode(w.isEmpty() ? "a" : w.substring(0, 1))));
                }
            };
        }
        return switch (r.nextInt(ordered ? 14 : 7)) {
            case 0 -> v;
            case 1 -> op("$eq", v);
            case 2 -> op("$ne", v);
            case 3 -> op("$in", Json.NODES.arrayNode().add(v).add(f.equals("s") ? Json.NODES.textNode(word(r)) : v));
            case 4 -> op("$nin", Json.NODES.arrayNode().add(v));
            case 5 -> op("$exists", Json.NODES.booleanNode(r.nextBoolean()));
            case 6 -> op("$type", Json.NODES.textNode(List.of("number", "string", "boolean", "null", "object").get(r.nextInt(5))));
            case 7 -> op("$gt", v);
            case 8 -> op("$gte", v);
            case 9 -> op("$lt", v);
            case 10 -> op("$lte", v);
            case 11 -> v.isTextual() ? op("$beginsWith", Json.NODES.textNode(v.textValue().isEmpty() ? "" : v.textValue().substring(0, 1)))
                    : op("$mod", Json.NODES.arrayNode().add(3).add(r.nextInt(3)));
            case 12 -> v.isTextual() ? op("$regex", Json.NODES.textNode(List.of("^a", "b$", "[A-Z]", "\\+").get(r.nextInt(4))))
                    : op("$eq", Json.NODES.nullNode());
            default -> Json.NODES.objectNode().set("$not", op(r.nextBoolean() ? "$eq" : "$gt", v));
        };
    }
}
