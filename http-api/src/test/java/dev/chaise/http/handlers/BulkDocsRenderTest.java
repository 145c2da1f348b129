package dev.chaise.http.handlers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code _bulk_docs}' rows written straight to bytes are what Jackson writes for the same rows as a tree. */
class BulkDocsRenderTest {
    private static String asTree(List<BulkDocsHandler.Row> rows) {
        ArrayNode a = Json.NODES.arrayNode();
        for (BulkDocsHandler.Row r : rows) {
            ObjectNode o = a.addObject();
            if (r.isOk()) o.put("ok", true);
            if (r.id() != null) o.put("id", r.id());
            if (r.rev() != null) o.put("rev", r.rev());
            if (!r.isOk()) {
                o.put("error", r.error());
                o.put("reason", r.reason());
            }
        }
        return Json.write(a) + "\n";
    }

    @Test
    void everyKindOfRowAndStringIsWrittenAsJacksonWritesIt() {
        List<BulkDocsHandler.Row> rows = List.of(
                BulkDocsHandler.Row.ok("b0000001", "1-0123456789abcdef0123456789abcdef"),
                BulkDocsHandler.Row.ok("q\"uote\\back/slash", "2-aa"),
                BulkDocsHandler.Row.ok("ctl\u0000\u0001\t\n\u001f\u007fdel", "3-bb"),
                BulkDocsHandler.Row.ok("caf\u00e9 \u4e2d \ud83d\ude00 \u2028", "4-cc"),
                new BulkDocsHandler.Row("c", null, "conflict", "Document update conflict."),
                new BulkDocsHandler.Row("r", "1-dd", "forbidden", "no \"way\"\n"),
                new BulkDocsHandler.Row(null, null, "bad_request", null),
                BulkDocsHandler.Row.ok("", "1-ee"));
        assertEquals(asTree(rows), new String(BulkDocsHandler.render(rows), StandardCharsets.UTF_8));
        assertEquals("[]\n", new String(BulkDocsHandler.render(List.of()), StandardCharsets.UTF_8));
    }
}
