package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code fuzz/http-fuzz.mjs} against the server jar run with the README's defaults (embedded
 * storage on disk, {@code bin/jvm.options}): malformed requests of every kind over raw sockets.
 * Each must get a status line within 10 s and none a 5xx but 501; the server must then answer
 * {@code GET /} and a write and read of a known document, and its RSS stay under 1 GB. 1,500
 * requests here, 10,500 in the slow suite; the summary line goes to {@code target/http-fuzz.log}
 * (docs/reliability.md).
 */
class HttpFuzzTest {
    @Test
    void malformedRequestsAreAllAnsweredWithoutServerErrors() throws Exception {
        Path data = Files.createTempDirectory("chaise-fuzz-");
        try (ChaiseProcess chaise = new ChaiseProcess("chaise-fuzz-server.log", "[chaise]\nstorage = embedded\ndata_dir = " + data + "\n")) {
            ProcessBuilder pb = chaise.child(List.of("node", "fuzz/http-fuzz.mjs"));
            if (Boolean.getBoolean("chaise.slow")) pb.environment().put("CHAISE_SLOW", "1");
            Process node = pb.start();
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Thread relay = ChaiseProcess.relay(node, lines);
            assertTrue(node.waitFor(20, TimeUnit.MINUTES), "the fuzz suite did not finish in 20 minutes");
            relay.join(10_000);
            Files.write(ChaiseProcess.MODULE.resolve("target/http-fuzz.log"), lines);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("FUZZ-SUMMARY ")), "the fuzz suite printed no summary");
            assertEquals(0, node.exitValue(), "the fuzz suite failed; its FAIL lines are above");
        }
    }
}
