package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real CouchDB clients (nano, PouchDB 9 from npm) against the real server jar over HTTP: installs
 * the clients with {@code npm ci} when needed and runs {@code node --test tests/}; the node output
 * goes to the build log.
 */
class NodeClientsTest {
    static ChaiseProcess chaise;

    @BeforeAll
    static void startServer() throws Exception {
        chaise = new ChaiseProcess("chaise-it-server.log");
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (chaise != null) chaise.close();
    }

    @Test
    void realClientsPass() throws Exception {
        ChaiseProcess.installClients();
        ProcessBuilder pb = chaise.child(List.of("node", "--test", "--test-concurrency=1", "tests/"));
        if (Boolean.getBoolean("chaise.slow")) pb.environment().put("CHAISE_SLOW", "1");
        Process node = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread relay = ChaiseProcess.relay(node, lines);
        assertTrue(node.waitFor(10, TimeUnit.MINUTES), "node tests did not finish in 10 minutes");
        relay.join(10_000);
        assertEquals(0, node.exitValue(), "node --test failed; its report is above");
        // node --test exits 0 when it finds no test at all: that must not pass.
        int passed = lines.stream().filter(l -> l.startsWith("# pass ")).mapToInt(l -> Integer.parseInt(l.substring(7).trim())).sum();
        assertTrue(passed > 0, "node --test ran no test");
    }
}
