package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * What can be checked of the Docker image without a Docker engine: docker/test-entrypoint.sh maps
 * the environment to the ini files as the image's entrypoint does, and runs the real jar on them;
 * shellcheck lints the scripts where it is installed.
 */
class DockerEntrypointTest {
    static final Path ROOT = ChaiseProcess.MODULE.getParent();

    @Test
    void theEntrypointMapsTheEnvironmentAsTheImageWould() throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("docker/test-entrypoint.sh").toString()).redirectErrorStream(true);
        pb.environment().put("CHAISE_JAR", ROOT.resolve("server/target/chaise.jar").toString());
        pb.environment().put("JAVA", ProcessHandle.current().info().command().orElse("java"));
        List<String> lines = run(pb);
        assertTrue(lines.stream().anyMatch(l -> l.matches("\\d+ passed, 0 failed")), "test-entrypoint.sh: " + lines);
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("skipped")), "the server run was skipped: " + lines);
    }

    @Test
    void shellcheckFindsNothing() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/shellcheck")), "shellcheck is not installed (apt-get install shellcheck)");
        ProcessBuilder pb = new ProcessBuilder("shellcheck", "-x", "docker/entrypoint.sh", "docker/test-entrypoint.sh", "docker/fdb-init.sh",
                "bin/fetch-npm.sh", "chaise", ".ci/run", "src-it/pouchdb-suite.sh", "src-it/couchdb-suite.sh", "src-it/bench/ab-jars.sh",
                "src-it/bench/first-round-jit.sh", "src-it/bench/first-round-ab.sh")
                .directory(ROOT.toFile()).redirectErrorStream(true);
        run(pb);
    }

    private static List<String> run(ProcessBuilder pb) throws Exception {
        Process p = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread relay = ChaiseProcess.relay(p, lines);
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), pb.command() + " did not finish in 3 minutes");
        relay.join(10_000);
        assertEquals(0, p.exitValue(), pb.command() + " failed: " + lines);
        return lines;
    }
}
