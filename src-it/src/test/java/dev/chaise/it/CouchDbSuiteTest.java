package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Apache CouchDB 3.5.0's own Elixir integration suite against the server jar ({@code couchdb-suite.sh},
 * which starts the jar itself; slow: it builds the suite's dependencies once into a cache, then runs
 * for most of an hour). Not every test passes yet (docs/compatibility.md and
 * src-it/couchdb-suite-failures.txt say which fail and why), so the script guards the count: fewer
 * passes than recorded ({@code COUCHDB_SUITE_MIN_PASS}) is a regression. It needs Elixir and Erlang
 * from Debian and git mirrors of CouchDB and the suite's dependencies ({@code MIRRORS}); without
 * them the test reports skipped.
 */
@Tag("slow")
class CouchDbSuiteTest {
    /** couchdb-suite.sh's exit code when Elixir, the runner or the mirrors are missing. */
    static final int SKIPPED = 77;

    @Test
    void couchDbElixirSuite() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", "couchdb-suite.sh").directory(ChaiseProcess.MODULE.toFile()).redirectErrorStream(true);
        pb.environment().put("JAVA", ProcessHandle.current().info().command().orElse("java"));
        Process p = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread relay = ChaiseProcess.relay(p, lines);
        assertTrue(p.waitFor(120, TimeUnit.MINUTES), "the CouchDB suite did not finish in 120 minutes");
        relay.join(10_000);
        Assumptions.assumeTrue(p.exitValue() != SKIPPED, () -> String.join("\n", lines));
        assertEquals(0, p.exitValue(), "couchdb-suite.sh: exit 1 is fewer passing tests than recorded, 2 that the suite could not run; see above");
    }
}
