package dev.chaise.server;

import dev.chaise.http.ChaiseHttp;
import dev.chaise.http.ConfigStore;
import dev.chaise.http.HttpConfig;
import dev.chaise.http.auth.PasswordHash;
import dev.chaise.http.auth.SecurityObject;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.fdb.FdbKvStore;
import dev.chaise.storage.Storage;
import dev.chaise.views.ViewService;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.js.GraalJsEngine;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar chaise.jar [--config FILE]...}: reads the ini files (later ones win; changes
 * made over HTTP go to the last), opens the configured storage and serves HTTP until stopped.
 */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    private Main() {}

    public static void main(String[] args) throws Exception {
        IniConfig config = new IniConfig();
        Path last = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--config" -> {
                    if (i + 1 >= args.length) usage("--config needs a file");
                    last = Path.of(args[++i]);
                    config.merge(java.nio.file.Files.readString(last), last.toString());
                }
                case "-h", "--help" -> usage(null);
                default -> usage("unknown argument " + args[i]);
            }
        }
        IniConfigStore live = new IniConfigStore(config, last);
        HttpConfig http = httpConfig(config, version());
        addAdminFromEnvironment(live, System.getenv(), http);
        if (!new ServerAdmins(live).any()) {
            // As CouchDB 3: there is no admin party.
            log.error("No admin account configured, aborting startup. Add one under [admins] in a --config file "
                    + "(name = password; it is hashed at start), or set COUCHDB_USER and COUCHDB_PASSWORD.");
            System.exit(1);
        }
        hashPlainTextAdmins(live, http);

        KvStore store = openStorage(config);
        Storage storage = new Storage(store, SecurityObject.ADMIN_ONLY_JSON);
        config.get("couchdb", "max_document_size").map(Long::parseLong).ifPresent(storage::maxDocumentSize);
        config.get("couchdb", "max_attachment_size").map(Long::parseLong).ifPresent(storage::maxAttachmentSize);
        long jsTimeout = config.get("couchdb", "os_process_timeout").map(Long::parseLong).orElse(5000L);
        GraalJsEngine js = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofMillis(jsTimeout), GraalJsEngine.Options.defaults().poolSize()));
        ViewService views = new ViewService(storage, js).enableInteractiveViews()
                .useJobQueue(new JobQueue(store), 2, Duration.ofSeconds(60));
        // CouchDB's background indexer; 0 turns it off (indexes are then built by queries only).
        long autoupdateMs = config.get("chaise", "view_autoupdate_delay_ms").map(Long::parseLong).orElse(1000L);
        if (autoupdateMs > 0) views.enableAutoUpdate(Duration.ofMillis(autoupdateMs));
        // The JS interpreter is slow until HotSpot has compiled it; warm it in the background so
        // the first index build after a restart does not pay for it. 0 turns it off.
        int warmupDocs = config.get("chaise", "js_warmup_docs").map(Integer::parseInt).orElse(20_000);
        if (warmupDocs > 0) {
            Thread.ofPlatform().name("js-warmup").daemon().priority(Thread.MIN_PRIORITY).start(() -> {
                long t0 = System.nanoTime();
                int n = js.warmUp(warmupDocs);
                log.info("JavaScript engine warmed on {} documents in {} ms", n, (System.nanoTime() - t0) / 1_000_000);
            });
        }
        ChaiseHttp server;
        try {
            server = new ChaiseHttp(http, storage, views, live, List.of()).start();
        } catch (Exception e) {
            log.error("cannot serve on {}:{}", http.bindAddress(), http.port(), e);
            storage.close();
            store.close();
            System.exit(1);
            return;
        }
        log.info("storage ready: backend={}", store.backendName());
        log.info("Chaise listening on http://{}:{}", http.bindAddress(), server.port());

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("stopping");
            server.close();
            views.close();
            js.close();
            storage.close();
            store.close();
            stopped.countDown();
        }, "chaise-shutdown"));
        stopped.await();
    }

    /** The HTTP settings from the ini, with CouchDB's section and key names and defaults. */
    static HttpConfig httpConfig(IniConfig c, String version) {
        HttpConfig d = HttpConfig.defaults();
        HttpConfig.Auth a = d.auth();
        HttpConfig.Auth auth = new HttpConfig.Auth(
                intOf(c, "chttpd_auth", "timeout", a.timeoutSeconds()),
                boolOf(c, "chttpd_auth", "allow_persistent_cookies", a.allowPersistentCookies()),
                intOf(c, "chttpd_auth", "iterations", a.iterations()),
                c.get("chttpd_auth", "pbkdf2_prf", a.pbkdf2Prf()),
                c.get("chttpd_auth", "secret").orElse(null),
                c.get("chttpd_auth", "same_site", a.sameSite()),
                c.get("chttpd_auth", "cookie_domain", a.cookieDomain()));
        return new HttpConfig(
                c.get("chttpd", "bind_address", d.bindAddress()),
                intOf(c, "chttpd", "port", d.port()),
                c.get("chttpd", "max_http_request_size").map(Long::parseLong).orElse(d.maxRequestSize()),
                c.get("chaise", "max_buffered_body_size").map(Long::parseLong).orElse(d.maxBufferedBody()),
                intOf(c, "chaise", "http_idle_timeout", d.idleTimeoutSeconds()),
                c.get("chaise", "node_name", d.nodeName()),
                version,
                c.get("chaise", "git_sha", d.gitSha()),
                boolOf(c, "chttpd", "admin_only_all_dbs", d.adminOnlyAllDbs()),
                intOf(c, "uuids", "max_count", d.maxUuidCount()),
                boolOf(c, "chttpd", "decode_plus_to_space", d.decodePlusToSpace()),
                auth,
                intOf(c, "chttpd", "request_head_timeout", d.requestHeadTimeoutSeconds()),
                intOf(c, "chttpd", "max_connections", d.maxConnections()));
    }

    /** The official CouchDB image's way of naming the first admin; an admin already configured wins. */
    static void addAdminFromEnvironment(ConfigStore live, Map<String, String> env, HttpConfig http) {
        String user = env.get("COUCHDB_USER");
        String password = env.get("COUCHDB_PASSWORD");
        if (user == null || user.isEmpty() || password == null || password.isEmpty()) return;
        if (live.get(ServerAdmins.SECTION, user).isPresent()) return;
        setTolerant(live, user, ServerAdmins.stored(password, http.auth()));
        log.info("admin {} from COUCHDB_USER", user);
    }

    static void hashPlainTextAdmins(ConfigStore live, HttpConfig http) {
        live.section(ServerAdmins.SECTION).forEach((name, value) -> {
            if (!PasswordHash.isHashed(value)) {
                setTolerant(live, name, ServerAdmins.stored(value, http.auth()));
                log.info("hashed the plain-text password of admin {}", name);
            }
        });
    }

    /** Persists if it can; a read-only ini (a mounted config) keeps the hash in memory only. */
    private static void setTolerant(ConfigStore live, String name, String hash) {
        try {
            live.set(ServerAdmins.SECTION, name, hash, true);
        } catch (RuntimeException e) {
            log.warn("could not write the hashed password of admin {} back to the config ({}); it is hashed in memory only", name, e.getMessage());
            live.set(ServerAdmins.SECTION, name, hash, false);
        }
    }

    private static int intOf(IniConfig c, String section, String key, int fallback) {
        return c.get(section, key).map(Integer::parseInt).orElse(fallback);
    }

    private static boolean boolOf(IniConfig c, String section, String key, boolean fallback) {
        return c.get(section, key).map(Boolean::parseBoolean).orElse(fallback);
    }

    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("/chaise-version.properties")) {
            if (in == null) return "unknown";
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    static KvStore openStorage(IniConfig config) {
        String backend = config.get("chaise", "storage", "embedded");
        return switch (backend) {
            case "embedded" -> EmbeddedKvStore.open(EmbeddedOptions.onDisk(Path.of(config.get("chaise", "data_dir", "./data"))));
            case "embedded-memory" -> EmbeddedKvStore.open(EmbeddedOptions.inMemory());
            case "fdb" -> FdbKvStore.open(config.get("chaise", "fdb_cluster_file").orElse(null));
            default -> throw new IllegalArgumentException("[chaise] storage must be embedded, embedded-memory or fdb, not " + backend);
        };
    }

    private static void usage(String error) {
        if (error != null) System.err.println("chaise: " + error);
        System.err.println("usage: java -jar chaise.jar [--config FILE]...");
        System.exit(error == null ? 0 : 2);
    }
}
