package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
        Path data = Files.createTempDirectory("chaise-load-");
        try (ChaiseProcess chaise = new ChaiseProcess("chaise-load-server.log", "[chaise]\nstorage = embedded\ndata_dir = " + data + "\n")) {
            Process node = chaise.child(List.of("node", "fuzz/load.mjs")).start();
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Thread relay = ChaiseProcess.relay(node, lines);
            assertTrue(node.waitFor(10, TimeUnit.MINUTES), "the load test did not finish in 10 minutes");
            relay.join(10_000);
            Files.write(ChaiseProcess.MODULE.resolve("target/http-load.log"), lines);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("LOAD-SUMMARY ")), "the load test printed no summary");
            assertEquals(0, node.exitValue(), "the load test failed; its FAIL lines are above");
        }
    }
}
