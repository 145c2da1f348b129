package dev.chaise.views.collation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RawKeyCodecTest {
    /** view_collation_raw_test.exs's values, in Erlang's term order, plus the edges of each kind. */
    static final String[] ORDERED = {
        "-1e300", "-2", "-1.5", "0", "1", "2", "3", "4", "1e300",
        "false", "null", "true",
        "{}", "{\"a\":1}", "{\"a\":2}", "{\"a\":2,\"a0\":1}", "{\"b\":1}", "{\"b\":2}", "{\"b\":2,\"a\":1}", "{\"b\":2,\"c\":2}",
        "[]", "[1]", "[\"a\"]", "[\"b\"]", "[\"b\",\"c\"]", "[\"b\",\"c\",\"a\"]", "[\"b\",\"d\"]", "[\"b\",\"d\",\"e\"]",
        "\"\"", "\"A\"", "\"B\"", "\"Z\"", "\"a\"", "\"a\\u0000\"", "\"a\\u0000a\"", "\"aa\"", "\"b\"", "\"ba\"", "\"bb\"", "\"é\"", "\"😀\"",
    };

    @Test
    void bytesSortAsErlangTerms() throws Exception {
        List<JsonNode> keys = new ArrayList<>();
        for (String k : ORDERED) keys.add(Json.MAPPER.readTree(k));
        for (int i = 0; i < keys.size(); i++) {
            for (int j = 0; j < keys.size(); j++) {
                int want = Integer.compare(i, j);
                byte[] a = Collation.RAW.encode(keys.get(i)), b = Collation.RAW.encode(keys.get(j));
                assertEquals(want, Integer.signum(Arrays.compareUnsigned(a, b)), ORDERED[i] + " vs " + ORDERED[j]);
                assertEquals(want, Integer.signum(Collation.RAW.compare(keys.get(i), keys.get(j))), ORDERED[i] + " vs " + ORDERED[j]);
            }
        }
    }

    @Test
    void integersAndFloatsOfOneValueAreOneKey() throws Exception {
        // Erlang's term order compares 1 and 1.0 as equal numbers.
        assertEquals(0, Arrays.compareUnsigned(Collation.RAW.encode(Json.MAPPER.readTree("[1]")), Collation.RAW.encode(Json.MAPPER.readTree("[1.0]"))));
    }

    @Test
    void aViewsOptionsChooseIt() throws Exception {
        assertEquals(Collation.RAW, Collation.of(Json.MAPPER.readTree("{\"collation\":\"raw\"}")));
        assertEquals(Collation.DEFAULT, Collation.of(Json.MAPPER.readTree("{\"collation\":\"default\"}")));
        assertEquals(Collation.DEFAULT, Collation.of(null));
    }
}
