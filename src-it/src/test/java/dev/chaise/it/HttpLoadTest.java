package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code fuzz/load.mjs} against the jar as README runs it (slow: 90 s and then up to a minute for
 * the feeds to catch up): 1,000 kept-alive connections doing GETs, 200 slow clients and 500
 * continuous {@code _changes} feeds at once while documents are written. Every feed must get every
 * change exactly once, no kept-alive connection may be dropped, every slow client must be closed
 * by the request-head timeout, and RSS stay under 1 GB; the probe's latency on a fresh connection
 * is recorded (target/http-load.log, docs/reliability.md), not asserted.
 */
@Tag("slow")
class HttpLoadTest {
    @Test
    void connectionsFeedsAndSlowClientsAtOnce() throws Exception {
        try (ChaiseProcess chaise = ChaiseProcess.onDisk("chaise-load-server.log")) {
            List<String> lines = chaise.runNode("fuzz/load.mjs", Map.of(), 10, "http-load.log");
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("LOAD-SUMMARY ")), "the load test printed no summary");
        }
    }
}
