package dev.chaise.views.collation;

import static dev.chaise.views.collation.CollationAssertions.assertCollateEqual;
import static dev.chaise.views.collation.CollationAssertions.assertStrictlyIncreasing;
import static dev.chaise.views.collation.CollationAssertions.json;
import static dev.chaise.views.collation.CollationAssertions.parseAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ViewKeyCodecTest {

    static JsonNode text(String s) {
        return Json.NODES.textNode(s);
    }

    static JsonNode big(String digits) {
        return Json.NODES.numberNode(new BigInteger(digits));
    }

    @Test
    void caseAndAccents() {
        // Accent (secondary) outweighs case (tertiary); letters (primary) outweigh both.
        assertStrictlyIncreasing(List.of(text("e"), text("E"), text("é"), text("É"), text("f")));
        assertStrictlyIncreasing(List.of(text("resume"), text("Resume"), text("résumé"), text("resumes")));
        assertStrictlyIncreasing(List.of(text("a"), text("å"), text("Å"), text("b")));
    }

    @Test
    void canonicallyEquivalentStringsCollateEqual() {
        // ICU says equal and CouchDB adds no codepoint tie-break: such rows are ordered by doc id.
        assertCollateEqual(text("\u00e9"), text("e\u0301"));
        assertCollateEqual(text("\u00c5"), text("A\u030a"));
        assertCollateEqual(text("\u212b"), text("\u00c5")); // ANGSTROM SIGN
    }

    @Test
    void ignorableCharactersCollateEqual() {
        assertCollateEqual(text("a"), text("\u200ba\u200c\u200d")); // zero-width, as CouchDB's own tests
        assertCollateEqual(text("ab"), text("a\u0000b"));
        assertCollateEqual(text(""), text("\u0001"));
    }

    @Test
    void scriptsAndEmoji() {
        // Symbols (emoji among them) before digits, digits before letters, Latin before Greek, Cyrillic, Han.
        assertStrictlyIncreasing(List.of(
                text(""), text(" "), text("!"), text("😀"), text("1"), text("a"), text("z"),
                text("α"), text("я"), text("中"), text("日")));
        assertStrictlyIncreasing(List.of(text("中"), text("中国"), text("中文")));
        assertStrictlyIncreasing(List.of(text("😀"), text("😀😀"), text("😁")));
    }

    @Test
    void numbersCompareByExactValue() {
        assertStrictlyIncreasing(List.of(
                big("-1" + "0".repeat(400)),
                Json.NODES.numberNode(-Double.MAX_VALUE),
                Json.NODES.numberNode(Long.MIN_VALUE),
                Json.NODES.numberNode(-1.5),
                Json.NODES.numberNode(-1),
                Json.NODES.numberNode(-0.1),
                Json.NODES.numberNode(-Double.MIN_VALUE),
                Json.NODES.numberNode(0),
                Json.NODES.numberNode(Double.MIN_VALUE),
                Json.NODES.numberNode(0.1),
                Json.NODES.numberNode(0.5),
                Json.NODES.numberNode(1),
                Json.NODES.numberNode(1.5),
                Json.NODES.numberNode(10),
                Json.NODES.numberNode(100.5),
                Json.NODES.numberNode(9007199254740992L),
                Json.NODES.numberNode(9007199254740993L),
                Json.NODES.numberNode(Long.MAX_VALUE),
                Json.NODES.numberNode(1e23), // 99999999999999991611392 exactly
                big("99999999999999991611393"),
                big("1" + "0".repeat(23)),
                Json.NODES.numberNode(Double.MAX_VALUE),
                big("1" + "0".repeat(400))));
    }

    @Test
    void equalNumbersEncodeAlike() {
        assertCollateEqual(json("1"), json("1.0"));
        assertCollateEqual(json("100"), json("1e2"));
        assertCollateEqual(json("0"), json("-0.0"));
        assertCollateEqual(json("0.0"), json("-0.0"));
        assertCollateEqual(Json.NODES.numberNode(9007199254740992L), Json.NODES.numberNode(9007199254740992.0));
        assertCollateEqual(big(new BigDecimal(1e23).toBigIntegerExact().toString()), Json.NODES.numberNode(1e23));
        assertCollateEqual(Json.NODES.numberNode(0.5f), Json.NODES.numberNode(0.5));
        assertCollateEqual(Json.NODES.numberNode(7), Json.NODES.numberNode(BigInteger.valueOf(7)));
    }

    @Test
    void fractionalDoublesUseShortDecimals() {
        assertTrue(ViewKeyCodec.encode(json("0.1")).length <= 8);
        assertTrue(ViewKeyCodec.encode(json("-123.456")).length <= 10);
    }

    @Test
    void mixedTypesNestedArraysAndObjects() {
        assertStrictlyIncreasing(parseAll(
                "[]", "[null]", "[null,null]", "[false]", "[true]", "[-1]", "[0]", "[0,[]]", "[1]",
                "[\"\"]", "[\"a\"]", "[\"a\",1]", "[\"A\"]", "[[]]", "[[null]]", "[[1],2]", "[[1,2]]", "[[[]]]",
                "[{}]", "[{\"a\":null}]", "{}"));
        assertStrictlyIncreasing(parseAll(
                "{}", "{\"a\":null}", "{\"a\":1}", "{\"a\":1,\"b\":0}", "{\"a\":\"x\"}", "{\"a\":[]}",
                "{\"a\":{}}", "{\"A\":0}", "{\"aa\":0}", "{\"b\":1}", "{\"b\":1,\"a\":0}", "{\"é\":0}"));
        assertStrictlyIncreasing(parseAll("[1,{\"a\":[2]}]", "[1,{\"a\":[2,null]}]", "[1,{\"a\":[3]}]", "[1,{\"b\":[]}]"));
    }

    @Test
    void objectsCompareInMemberOrder() {
        JsonNode ab = json("{\"a\":1,\"b\":2}"), ba = json("{\"b\":2,\"a\":1}");
        assertEquals(-1, Integer.signum(ViewCollation.compare(ab, ba)));
        assertEquals(-1, CollationAssertions.byteOrder(ab, ba));
    }

    @Test
    void encodingIsPrefixFreeInsideTuples() {
        List<JsonNode> keys = parseAll("null", "1", "10", "\"a\"", "\"ab\"", "[\"a\"]", "[\"a\",\"b\"]", "{\"a\":1}");
        for (int i = 0; i < keys.size(); i++) {
            for (int j = 0; j < keys.size(); j++) {
                byte[] a = ViewKeyCodec.encode(keys.get(i)), b = ViewKeyCodec.encode(keys.get(j));
                if (i != j && a.length <= b.length) {
                    assertFalse(Arrays.equals(a, 0, a.length, b, 0, a.length), keys.get(i) + " encodes as a prefix");
                }
                // The row key {key, docid}: the view key decides, whatever the doc ids.
                byte[] ra = Tuple.from(a, "zzz", 0L).pack(), rb = Tuple.from(b, "aaa", 9L).pack();
                int want = Integer.signum(Integer.compare(i, j));
                if (want != 0) assertEquals(want, Integer.signum(Arrays.compareUnsigned(ra, rb)));
            }
        }
        byte[] k = ViewKeyCodec.encode(json("\"a\""));
        assertTrue(Arrays.compareUnsigned(Tuple.from(k, "doc1").pack(), Tuple.from(k, "doc2").pack()) < 0);
    }

    /** The usual "prefix" range end, {@code endkey="abc\ufff0"}, and U+FFFF (ICU's maximum) sort after letters. */
    @Test
    void highCodepointsSortLast() {
        assertStrictlyIncreasing(List.of(text("abc"), text("abcz"), text("abcZZZ"), text("abc中"), text("abc\ufff0"),
                text("abc\uffff"), text("abd")));
    }

    @Test
    void maxSortsAfterEverything() {
        for (JsonNode k : ViewCollationSpecTest.SPEC) {
            assertTrue(Arrays.compareUnsigned(ViewKeyCodec.encode(k), ViewKeyCodec.MAX) < 0);
        }
    }

    @Test
    void keySizeLimitIsOnTheJson() {
        JsonNode ok = text("x".repeat(ViewKeyCodec.KEY_SIZE_LIMIT - 2)); // 2 quotes
        ViewKeyCodec.checkKeySize(ok);
        ViewKeyCodec.encodeChecked(ok);
        JsonNode tooBig = text("x".repeat(ViewKeyCodec.KEY_SIZE_LIMIT - 1));
        ViewKeyTooLargeException e = assertThrows(ViewKeyTooLargeException.class, () -> ViewKeyCodec.encodeChecked(tooBig));
        assertEquals(ViewKeyCodec.KEY_SIZE_LIMIT + 1, e.size());
        assertFalse(e.encoded());
    }

    @Test
    void encodedSizeLimitCatchesLongSortKeys() {
        // 7802 bytes of JSON, but U+FDFA expands to a whole Arabic phrase: a sort key of ~110 KB.
        JsonNode k = text("\uFDFA".repeat(2600));
        ViewKeyCodec.checkKeySize(k);
        ViewKeyTooLargeException e = assertThrows(ViewKeyTooLargeException.class, () -> ViewKeyCodec.encodeChecked(k));
        assertTrue(e.encoded());
        assertEquals(ViewKeyCodec.ENCODED_SIZE_LIMIT, e.limit());
    }

    @Test
    void collatorIsRootAtTertiaryStrength() {
        assertEquals(com.ibm.icu.text.Collator.TERTIARY, ViewCollation.COLLATOR.getStrength());
        assertFalse(ViewKeyCodec.collatorVersion().isEmpty());
    }
}
