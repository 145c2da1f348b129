package dev.chaise.views.collation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.Arrays;
import java.util.List;

/** Checks that a list is in strictly increasing collation, by the comparator and by the bytes. */
final class CollationAssertions {
    private CollationAssertions() {}

    static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    static List<JsonNode> parseAll(String... texts) {
        return Arrays.stream(texts).map(CollationAssertions::json).toList();
    }

    static int byteOrder(JsonNode a, JsonNode b) {
        return Integer.signum(Arrays.compareUnsigned(ViewKeyCodec.encode(a), ViewKeyCodec.encode(b)));
    }

    /** Every pair, not only neighbours, so a non-transitive slip shows too. */
    static void assertStrictlyIncreasing(List<JsonNode> keys) {
        for (int i = 0; i < keys.size(); i++) {
            for (int j = 0; j < keys.size(); j++) {
                int want = Integer.signum(Integer.compare(i, j));
                JsonNode a = keys.get(i), b = keys.get(j);
                assertEquals(want, Integer.signum(ViewCollation.compare(a, b)), () -> "compare " + a + " vs " + b);
                assertEquals(want, byteOrder(a, b), () -> "encoding " + a + " vs " + b);
            }
        }
    }

    static void assertCollateEqual(JsonNode a, JsonNode b) {
        assertEquals(0, ViewCollation.compare(a, b), () -> "compare " + a + " vs " + b);
        assertTrue(Arrays.equals(ViewKeyCodec.encode(a), ViewKeyCodec.encode(b)), () -> "encoding " + a + " vs " + b);
    }
}
