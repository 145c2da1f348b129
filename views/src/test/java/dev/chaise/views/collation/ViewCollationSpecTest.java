package dev.chaise.views.collation;

import static dev.chaise.views.collation.CollationAssertions.assertStrictlyIncreasing;
import static dev.chaise.views.collation.CollationAssertions.json;
import static dev.chaise.views.collation.CollationAssertions.parseAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The orders CouchDB's documentation ("Views Collation") states. */
class ViewCollationSpecTest {

    /** The "Collation Specification" list, in its documented order. */
    static final List<JsonNode> SPEC = parseAll(
            "null", "false", "true",
            "1", "2", "3.0", "4",
            "\"a\"", "\"A\"", "\"aa\"", "\"b\"", "\"B\"", "\"ba\"", "\"bb\"",
            "[\"a\"]", "[\"b\"]", "[\"b\",\"c\"]", "[\"b\",\"c\",\"a\"]", "[\"b\",\"d\"]", "[\"b\",\"d\",\"e\"]",
            "{\"a\":1}", "{\"a\":2}", "{\"b\":1}", "{\"b\":2}", "{\"b\":2,\"a\":1}", "{\"b\":2,\"c\":2}");

    @Test
    void specificationListIsInOrder() {
        assertStrictlyIncreasing(SPEC);
    }

    @Test
    void shuffledSpecificationSortsBackByBytes() {
        List<JsonNode> shuffled = new ArrayList<>(SPEC);
        Collections.shuffle(shuffled, new Random(6));
        shuffled.sort((a, b) -> Arrays.compareUnsigned(ViewKeyCodec.encode(a), ViewKeyCodec.encode(b)));
        assertEquals(SPEC, shuffled);
        Collections.shuffle(shuffled, new Random(7));
        shuffled.sort(ViewCollation::compare);
        assertEquals(SPEC, shuffled);
    }

    /**
     * Printable ASCII. The docs list {@code ` ^} first; that is an older UCA. Since then (and in the
     * libicu CouchDB 3.5 builds with, as in icu4j) they are modifier symbols after {@code %}.
     */
    @Test
    void asciiSequence() {
        String seq = "_ - , ; : ! ? . ' \" ( ) [ ] { } @ * / \\ & # % ` ^ + < = > | ~ $ 0 1 2 3 4 5 6 7 8 9 "
                + "a A b B c C d D e E f F g G h H i I j J k K l L m M n N o O p P q Q r R s S t T u U v V w W x X y Y z Z";
        List<JsonNode> keys = new ArrayList<>();
        keys.add(Json.NODES.textNode(" "));
        for (String s : seq.split(" ")) keys.add(Json.NODES.textNode(s));
        assertStrictlyIncreasing(keys);
    }

    /** The ordering list of CouchDB's own comparison tests, which adds negatives and fractions. */
    @Test
    void couchdbTestValues() {
        assertStrictlyIncreasing(parseAll("null", "false", "true", "-2", "-0.1", "0", "0.1", "1", "2", "3.0", "4",
                "\"a\"", "\"A\"", "\"aa\"", "\"b\"", "\"B\"", "\"ba\"", "\"bb\"", "\"\ufffd\ufffd\ufffd\ufffd\"",
                "[\"a\"]", "[\"b\"]", "[\"b\",\"c\"]", "[\"b\",\"d\"]", "[\"b\",\"d\",\"e\"]",
                "{\"a\":1}", "{\"a\":2}", "{\"b\":1}", "{\"b\":2}", "{\"b\":2,\"a\":1}", "{\"b\":2,\"c\":2}"));
    }

    /** The "Key ranges" example: why startkey "Abc" misses "abc". */
    @Test
    void keyRangeExample() {
        assertStrictlyIncreasing(parseAll("\"abc\"", "\"Abc\"", "\"ABC\"", "\"abc1\"", "\"AbcZZZZ\"", "\"AbcZZZZZ\""));
    }

    @Test
    void arraysAndObjectsAfterScalars() {
        assertStrictlyIncreasing(parseAll("\"zzz\"", "[]", "[null]", "{}", "{\"\":null}"));
        assertEquals(0, ViewCollation.compare(json("3.0"), json("3")));
    }
}
