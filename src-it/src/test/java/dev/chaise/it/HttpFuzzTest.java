package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
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
        try (ChaiseProcess chaise = ChaiseProcess.onDisk("chaise-fuzz-server.log")) {
            List<String> lines = chaise.runNode("fuzz/http-fuzz.mjs", Map.of(), 20, "http-fuzz.log");
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("FUZZ-SUMMARY ")), "the fuzz suite printed no summary");
        }
    }
}
