package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvConformanceSuite;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The conformance suite against a real FoundationDB cluster, found in this order:
 * <ol>
 *   <li>{@code FDB_CLUSTER_FILE}: that cluster. Every test clears the key space of the Directory
 *       layer directories {@code chaise-conformance} and {@code chaise-conformance-other}, and
 *       nothing else; still, point it at a throwaway cluster.</li>
 *   <li>a Docker engine: a throwaway {@code foundationdb/foundationdb} container (the client
 *       library libfdb_c must still be installed on this host).</li>
 *   <li>neither: every test is reported as skipped, with the reason.</li>
 * </ol>
 */
class FdbKvConformanceTest extends KvConformanceSuite {
    /** A 7.3 server for fdb-java 7.3's client; override with -Dchaise.fdb.image=... */
    static final String IMAGE = System.getProperty("chaise.fdb.image", "foundationdb/foundationdb:7.3.69");
    /** So that an unreachable cluster fails the tests instead of hanging them. */
    private static final Duration TX_TIMEOUT = Duration.ofSeconds(30);
    static final java.util.List<String> DIRECTORY = java.util.List.of("chaise-conformance");

    private static String clusterFile;
    private static String skipReason;
    private static GenericContainer<?> container;

    /**
     * Decides once whether there is a cluster. The skip itself happens per test (below): surefire
     * 3.5 reports an assumption failed in {@code @BeforeAll} as zero tests run, which hides it.
     */
    @BeforeAll
    static void findCluster() throws Exception {
        String fromEnv = System.getenv("FDB_CLUSTER_FILE");
        if (fromEnv != null && !fromEnv.isBlank()) {
            // Asked for explicitly: a missing library or file is a failure, not a skip.
            if (!Files.isReadable(Path.of(fromEnv))) fail("FDB_CLUSTER_FILE=" + fromEnv + " is not a readable file");
            FdbKvStore.nativeClientProblem().ifPresent(p -> fail("FDB_CLUSTER_FILE is set, but " + p));
            clusterFile = fromEnv;
            return;
        }
        if (!dockerAvailable()) {
            skipReason = "no FoundationDB cluster: FDB_CLUSTER_FILE is not set and no Docker engine is available"
                    + " (set FDB_CLUSTER_FILE to a 7.3 cluster's file to run these tests)";
            return;
        }
        Optional<String> problem = FdbKvStore.nativeClientProblem();
        if (problem.isPresent()) {
            skipReason = "Docker is available, but this host cannot talk to FoundationDB: " + problem.get();
            return;
        }
        clusterFile = startContainer();
    }

    /** Also checked in {@link #newStore}, which the suite may call from its own {@code @BeforeEach}, before this one. */
    @BeforeEach
    void skipWithoutCluster() {
        assumeTrue(skipReason == null, skipReason);
    }

    private static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * FDB advertises the address in its cluster file, so the host must reach the server at that
     * exact address: host networking mode (127.0.0.1) and the same port inside and out. Assumes a
     * local Docker engine.
     */
    private static String startContainer() throws Exception {
        int port = freePort();
        GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withEnv("FDB_NETWORKING_MODE", "host")
                .withEnv("FDB_PORT", Integer.toString(port))
                .withExposedPorts(port)
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
                        .withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", port), new ExposedPort(port))));
        container = c;
        c.start();
        fdbcli(c, "configure new single memory", out -> out.contains("Database created") || out.contains("already exists"));
        fdbcli(c, "status minimal", out -> out.contains("The database is available"));
        String contents = c.execInContainer("sh", "-c", "cat \"${FDB_CLUSTER_FILE:-/var/fdb/fdb.cluster}\"").getStdout().strip();
        Path file = Files.createTempFile("chaise-fdb-test", ".cluster");
        file.toFile().deleteOnExit();
        Files.writeString(file, contents + "\n");
        return file.toString();
    }

    private static void fdbcli(GenericContainer<?> c, String command, java.util.function.Predicate<String> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            ExecResult r = c.execInContainer("fdbcli", "--exec", command, "--timeout", "10");
            last = r.getStdout() + r.getStderr();
            if (done.test(last)) return;
            Thread.sleep(1_000);
        }
        throw new IllegalStateException("fdbcli --exec '" + command + "' did not succeed in 90 s; last output: " + last);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @AfterAll
    static void stopContainer() {
        if (container != null) container.stop();
    }

    @Override
    protected KvStore newStore() {
        assumeTrue(skipReason == null, skipReason);
        return openCleared(DIRECTORY);
    }

    private static FdbKvStore openCleared(java.util.List<String> directory) {
        FdbKvStore store = FdbKvStore.open(FdbKvStore.Options.defaults(clusterFile).withTransactionTimeout(TX_TIMEOUT).withDirectory(directory));
        store.run(tx -> {
            tx.clear(Keys.EMPTY, Keys.SYSTEM_PREFIX); // the directory's key space only
            return null;
        });
        return store;
    }

    // A few checks of this backend's own plumbing on a real cluster; behaviour is the suite's job.

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void roundTripThroughTheCluster() {
        try (KvStore store = newStore()) {
            store.run(tx -> {
                tx.set(b("a"), b("1"));
                tx.mutate(MutationType.ADD, b("n"), new byte[] {5, 0, 0, 0});
                return null;
            });
            store.run(tx -> {
                assertArrayEquals(b("1"), tx.get(b("a")));
                assertArrayEquals(new byte[] {5, 0, 0, 0}, tx.get(b("n")));
                assertEquals(2, tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false).size());
                return null;
            });
            assertTrue(store.timer().stat(dev.chaise.kv.StoreTimer.Waits.COMMIT).count() >= 2);
        }
    }

    /** Two directories on one cluster: neither sees the other's keys, even through key selectors at its edges. */
    @Test
    void directoriesKeepTheirKeySpacesApart() {
        try (KvStore a = newStore(); KvStore other = openCleared(java.util.List.of("chaise-conformance-other"))) {
            a.run(tx -> {
                tx.set(b("k"), b("a"));
                return null;
            });
            other.run(tx -> {
                tx.set(b("k"), b("other"));
                tx.set(b("j"), b("other"));
                return null;
            });
            a.run(tx -> {
                java.util.List<dev.chaise.kv.KeyValue> all = tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false);
                assertEquals(1, all.size());
                assertArrayEquals(b("a"), all.get(0).value());
                assertArrayEquals(Keys.SYSTEM_PREFIX, tx.getKey(dev.chaise.kv.KeySelector.firstGreaterThan(b("k"))), "past the last key of this directory");
                assertArrayEquals(Keys.EMPTY, tx.getKey(dev.chaise.kv.KeySelector.lastLessThan(b("k"))), "before its first");
                return null;
            });
            assertEquals(2, other.run(tx -> tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false)).size());
        }
    }

    @Test
    void versionstampedKeyCarriesTheCommitsVersionstamp() {
        try (KvStore store = newStore()) {
            byte[] vs;
            try (Transaction tx = store.createTransaction()) {
                tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("v"), Tuple.from(Versionstamp.incomplete(3))), b("x"));
                tx.commit();
                vs = tx.getVersionstamp();
                assertEquals(Versionstamps.commitVersion(vs), tx.getCommittedVersion());
            }
            byte[] key = store.run(tx -> tx.getRangeAsList(b("v"), b("w"), 0, false).get(0).key());
            assertArrayEquals(Keys.concat(b("v"), Tuple.from(Versionstamp.complete(vs, 3)).pack()), key);
        }
    }
}
