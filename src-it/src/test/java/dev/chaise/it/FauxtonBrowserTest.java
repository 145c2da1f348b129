package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Fauxton in a real browser: {@code browser/fauxton.test.mjs} drives Debian's Chromium (through
 * playwright-core, from the lockfile) through a whole session against the server jar; screenshots
 * land in {@code target/fauxton/}. Chromium is {@code $CHROMIUM} or {@code /usr/bin/chromium};
 * without one the test is reported skipped, never passed ({@code .ci/run} installs it).
 */
class FauxtonBrowserTest {
    static Path chromium() {
        String env = System.getenv("CHROMIUM");
        return Stream.of(env, "/usr/bin/chromium", "/usr/bin/chromium-browser").filter(p -> p != null && !p.isEmpty()).map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
    }

    @Test
    void aWholeFauxtonSession() throws Exception {
        Path browser = chromium();
        Assumptions.assumeTrue(browser != null, "no Chromium: install Debian's chromium (apt-get install chromium) or set CHROMIUM");
        ChaiseProcess.installClients();
        try (ChaiseProcess chaise = new ChaiseProcess("chaise-fauxton-server.log")) {
            ProcessBuilder pb = chaise.child(List.of("node", "--test", "browser/"));
            pb.environment().put("CHROMIUM", browser.toString());
            Process node = pb.start();
            List<String> lines = Collections.synchronizedList(new ArrayList<>());
            Thread relay = ChaiseProcess.relay(node, lines);
            assertTrue(node.waitFor(5, TimeUnit.MINUTES), "the browser test did not finish in 5 minutes");
            relay.join(10_000);
            assertEquals(0, node.exitValue(), "the browser test failed; its report is above, screenshots in target/fauxton/");
            int passed = lines.stream().filter(l -> l.startsWith("# pass ")).mapToInt(l -> Integer.parseInt(l.substring(7).trim())).sum();
            assertTrue(passed > 0, "node --test ran no test");
        }
    }
}
