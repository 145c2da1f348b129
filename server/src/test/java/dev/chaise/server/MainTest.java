package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.auth.PasswordHash;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    @Test
    void httpConfigFromIniUsesCouchDbNamesAndDefaults() {
        HttpConfig d = HttpConfig.from(new IniConfigStore(ConfigFiles.defaults(), null), HttpConfig.defaults().withVendorVersion("1.2.3"));
        assertEquals("127.0.0.1", d.bindAddress());
        assertEquals(5984, d.port());
        assertEquals(4L << 30, d.maxRequestSize(), "CouchDB's default");
        assertEquals(64L << 20, d.maxBufferedBody());
        assertTrue(d.adminOnlyAllDbs());
        assertEquals(600, d.auth().timeoutSeconds());
        assertEquals(600_000, d.auth().iterations());
        assertEquals("1.2.3", d.vendorVersion());

        HttpConfig c = HttpConfig.from(new IniConfigStore(IniConfig.parse("""
                [chttpd]
                port = 15984
                bind_address = 0.0.0.0
                max_http_request_size = 1000
                admin_only_all_dbs = false
                [chttpd_auth]
                timeout = 60
                iterations = 10
                secret = s3cret
                [uuids]
                max_count = 5
                """, "t.ini"), null), HttpConfig.defaults());
        assertEquals(15984, c.port());
        assertEquals("0.0.0.0", c.bindAddress());
        assertEquals(1000, c.maxRequestSize());
        assertFalse(c.adminOnlyAllDbs());
        assertEquals(60, c.auth().timeoutSeconds());
        assertEquals(10, c.auth().iterations());
        assertEquals("s3cret", c.auth().secret());
        assertEquals(5, c.maxUuidCount());
    }

    @Test
    void fdbSettingsComeFromTheChaiseSection() {
        var d = Main.fdbOptions(IniConfig.parse("", "empty"));
        assertEquals(null, d.clusterFile());
        assertEquals(java.time.Duration.ofSeconds(10), d.transactionTimeout());
        assertEquals(100, d.retryLimit());
        assertEquals(java.util.List.of("chaise"), d.directory());
        var c = Main.fdbOptions(IniConfig.parse("""
                [chaise]
                fdb_cluster_file = /etc/foundationdb/fdb.cluster
                fdb_transaction_timeout_ms = 2500
                fdb_retry_limit = 7
                fdb_directory = apps/chaise-prod
                """, "t.ini"));
        assertEquals("/etc/foundationdb/fdb.cluster", c.clusterFile());
        assertEquals(java.time.Duration.ofMillis(2500), c.transactionTimeout());
        assertEquals(7, c.retryLimit());
        assertEquals(java.util.List.of("apps", "chaise-prod"), c.directory());
        assertEquals(java.util.List.of(), Main.fdbOptions(IniConfig.parse("[chaise]\nfdb_directory =\n", "t.ini")).directory(),
                "empty: the cluster's whole key space");
    }

    @Test
    void plainTextAdminsAreHashedAndWrittenBack(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("local.ini");
        Files.writeString(f, "[admins]\nadmin = hunter2\nkept = -pbkdf2:sha256-ab,cd,10\n");
        IniConfig ini = IniConfig.load(f);
        IniConfigStore live = new IniConfigStore(ini, f);
        HttpConfig http = HttpConfig.defaults().withAuth(HttpConfig.Auth.defaults().withIterations(10));
        Main.hashPlainTextAdmins(live, http);
        String stored = live.get("admins", "admin").orElseThrow();
        assertTrue(stored.startsWith("-pbkdf2:sha256-"), stored);
        assertTrue(PasswordHash.parseAdmin(stored).orElseThrow().matches("hunter2"));
        assertEquals("-pbkdf2:sha256-ab,cd,10", live.get("admins", "kept").orElseThrow());
        String file = Files.readString(f);
        assertFalse(file.contains("hunter2"), file);
        assertTrue(file.contains("admin = " + stored), file);
    }

    @Test
    void environmentAdminIsAddedUnlessConfigured(@TempDir Path dir) {
        HttpConfig http = HttpConfig.defaults().withAuth(HttpConfig.Auth.defaults().withIterations(10));
        IniConfigStore live = new IniConfigStore(IniConfig.parse("", "x"), null);
        Main.addAdminFromEnvironment(live, Map.of("COUCHDB_USER", "root", "COUCHDB_PASSWORD", "pw"), http);
        assertTrue(PasswordHash.parseAdmin(live.get("admins", "root").orElseThrow()).orElseThrow().matches("pw"));
        Main.addAdminFromEnvironment(live, Map.of("COUCHDB_USER", "root", "COUCHDB_PASSWORD", "other"), http);
        assertTrue(PasswordHash.parseAdmin(live.get("admins", "root").orElseThrow()).orElseThrow().matches("pw"));
        Main.addAdminFromEnvironment(live, Map.of("COUCHDB_USER", "x"), http);
        assertTrue(live.get("admins", "x").isEmpty());
    }

    /**
     * config_test.exs "Standard config options are present" and "Reload config": [couchdb]
     * database_dir and view_index_dir show the data directory; a reload drops the changes made with
     * X-Couch-Persist: false, keeps the persisted ones, and derives again what the server adds
     * (hashed admins, the data directory).
     */
    @Test
    void derivedValuesSurviveAReloadThatDropsUnpersistedChanges(@TempDir Path dir) throws Exception {
        Path local = dir.resolve("local.ini");
        Files.writeString(local, "[admins]\nadmin = pw\n[chttpd_auth]\niterations = 10\n[chaise]\ndata_dir = " + dir.resolve("data") + "\n");
        ConfigFiles files = ConfigFiles.resolve(List.of(dir));
        IniConfig ini = files.load();
        String dataDir = Main.dataDirOf(ini);
        assertEquals(dir.resolve("data").toAbsolutePath().normalize().toString(), dataDir);
        IniConfigStore live = new IniConfigStore(ini, files.writeTo(), files, s -> Main.derive(s, Map.of(), dataDir));
        Main.derive(live, Map.of(), dataDir);
        assertEquals(dataDir, live.get("couchdb", "database_dir").orElseThrow());
        assertEquals(dataDir, live.get("couchdb", "view_index_dir").orElseThrow());
        assertFalse(Files.readString(local).contains("database_dir"), "shown, not written");
        String hash = live.get("admins", "admin").orElseThrow();
        assertTrue(hash.startsWith("-pbkdf2"), hash);

        List<String> seen = new java.util.ArrayList<>();
        live.addListener((s, k, v) -> seen.add(s + "/" + k + "=" + v));
        live.set("test", "gone", "x", false);
        live.set("test", "kept", "y", true);
        Files.writeString(local, Files.readString(local) + "[edited]\nby_hand = z\n");
        seen.clear();
        live.reload();
        assertTrue(live.get("test", "gone").isEmpty());
        assertEquals("y", live.get("test", "kept").orElseThrow());
        assertEquals("z", live.get("edited", "by_hand").orElseThrow());
        assertEquals(dataDir, live.get("couchdb", "database_dir").orElseThrow());
        assertEquals(hash, live.get("admins", "admin").orElseThrow(), "the hash was persisted at start");
        assertTrue(seen.contains("test/gone=null") && seen.contains("edited/by_hand=z"), seen.toString());

        // A file that no longer parses: nothing changes, and the caller learns why.
        Files.writeString(local, "[broken\n");
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, live::reload);
        assertEquals("y", live.get("test", "kept").orElseThrow());
    }
}
