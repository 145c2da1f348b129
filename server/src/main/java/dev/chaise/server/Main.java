package dev.chaise.server;

import dev.chaise.http.wiring.ChaiseHttp;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.auth.PasswordHash;
import dev.chaise.storage.SecurityObject;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.fdb.FdbKvStore;
import dev.chaise.replicator.ReplicatorModule;
import dev.chaise.storage.AttachmentCompression;
import dev.chaise.storage.Storage;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.jobs.JobQueue;
import dev.chaise.views.js.GraalJsEngine;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar chaise.jar [--config PATH]...}: reads the configuration chain ({@link
 * ConfigFiles}), opens the configured storage, creates the system databases on a first start, and
 * serves HTTP until stopped.
 */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    private Main() {}

    /** What {@code --help} prints: the jar's options and the environment it reads. */
    static final String USAGE = """
            usage: java -jar chaise.jar [--config PATH]... | --help | --version

              --config PATH  an ini file, or an etc directory (its local.ini, then local.d/*.ini by name);
                             repeatable, later values win; changes over /_node/_local/_config are written
                             to the last file of the chain. default.ini (in the jar) comes first.
              --help         this text
              --version      the version

            environment:
              COUCHDB_USER, COUCHDB_PASSWORD  the first admin, when no [admins] entry names that user
            """;

    public static void main(String[] args) throws Exception {
        List<Path> configPaths = new java.util.ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--config" -> {
                    if (i + 1 >= args.length) usage("--config needs a file or directory");
                    configPaths.add(Path.of(args[++i]).toAbsolutePath());
                }
                case "-h", "--help" -> {
                    System.out.print(USAGE);
                    System.exit(0);
                }
                case "-v", "--version" -> {
                    System.out.println("Chaise " + version() + " (CouchDB " + HttpConfig.COUCHDB_VERSION + " API)");
                    System.exit(0);
                }
                default -> usage("unknown argument " + args[i]);
            }
        }
        ConfigFiles files;
        IniConfig config;
        try {
            files = ConfigFiles.resolve(configPaths);
            config = files.load();
        } catch (java.io.IOException | IllegalArgumentException e) {
            usage(e.getMessage());
            return;
        }
        String dataDir = dataDirOf(config);
        java.util.function.Consumer<IniConfigStore> derive = s -> derive(s, System.getenv(), dataDir);
        IniConfigStore live = new IniConfigStore(config, files.writeTo(), files, derive);
        LogLevel.apply(live.get("log", "level").orElse("info"));
        HttpConfig http = HttpConfig.from(live, HttpConfig.defaults().withVendorVersion(version()));
        derive.accept(live);
        if (!new ServerAdmins(live).any()) {
            // As CouchDB 3: there is no admin party.
            log.error("No admin account configured, aborting startup. Add one under [admins] in a --config file "
                    + "(name = password; it is hashed at start), or set COUCHDB_USER and COUCHDB_PASSWORD.");
            System.exit(1);
        }

        KvStore store = openStorage(config);
        Storage storage = new Storage(store, SecurityObject.ADMIN_ONLY_JSON)
                .maxDocumentSize(longOf(live, "couchdb", "max_document_size", Storage.DEFAULT_MAX_DOCUMENT_SIZE))
                .maxAttachmentSize(longOf(live, "couchdb", "max_attachment_size", Storage.DEFAULT_MAX_ATTACHMENT_SIZE))
                .maxPartitionSize(longOf(live, "couchdb", "max_partition_size", Storage.DEFAULT_MAX_PARTITION_SIZE))
                .attachmentCompression(compressionOf(live));
        LogCounts.attach(storage.stats());
        live.addListener((section, key, value) -> applyLive(live, storage, section, key));
        long jsTimeout = config.get("couchdb", "os_process_timeout").map(Long::parseLong).orElse(5000L);
        GraalJsEngine js = GraalJsEngine.create(new GraalJsEngine.Options(Duration.ofMillis(jsTimeout), GraalJsEngine.Options.defaults().poolSize()));
        JobQueue jobs = new JobQueue(store, http.nodeName()); // jobs (builds, replications) are held under [chaise] node_name
        ViewsModule views = new ViewsModule(storage, js).enableInteractiveViews()
                .useJobQueue(jobs, 2, Duration.ofSeconds(60)); // build jobs are held under [chaise] node_name
        // CouchDB's background indexer; 0 turns it off (indexes are then built by queries only).
        long autoupdateMs = config.get("chaise", "view_autoupdate_delay_ms").map(Long::parseLong).orElse(1000L);
        if (autoupdateMs > 0) views.enableAutoUpdate(Duration.ofMillis(autoupdateMs));
        // HotSpot compiles what runs often; until it has, a restarted server is about twice as slow.
        // In the background, one after the other (so they take at most one core from clients):
        // the request path, on a throwaway server sent a bulk load, a Mango index build, a JS view
        // build and 40,000 small requests; one full GC (WarmUp.settleHeap); then the JS
        // interpreter, for the first view build; then, once the compilers are idle, single-document
        // PUTs from four connections to another throwaway server. The warm-ups pause while an index
        // build runs, which a client may be waiting on. 0 turns each off.
        WarmUp.Plan warm = new WarmUp.Plan(config.get("chaise", "mango_warmup_docs").map(Integer::parseInt).orElse(20_000),
                config.get("chaise", "warmup_requests").map(Integer::parseInt).orElse(40_000));
        int jsWarmupDocs = config.get("chaise", "js_warmup_docs").map(Integer::parseInt).orElse(20_000);
        int warmupWrites = config.get("chaise", "warmup_writes").map(Integer::parseInt).orElse(16_000);
        if (!warm.none() || jsWarmupDocs > 0 || warmupWrites > 0) {
            Thread.ofPlatform().name("warmup").daemon().priority(Thread.MIN_PRIORITY).start(() -> {
                if (!warm.none()) {
                    try {
                        WarmUp.Result r = WarmUp.run(warm, () -> awaitNoBuilds(views));
                        log.info("request path warmed: {} documents indexed, {} requests, in {} ms", r.docs(), r.requests(), r.millis());
                    } catch (Exception e) {
                        log.warn("request-path warm-up failed", e);
                    }
                    awaitNoBuilds(views);
                    log.info("start-up state moved to the old generation in {} ms", WarmUp.settleHeap());
                }
                if (jsWarmupDocs > 0) {
                    long t0 = System.nanoTime();
                    int n = js.warmUp(jsWarmupDocs, () -> awaitNoBuilds(views));
                    log.info("JavaScript engine warmed on {} documents in {} ms", n, (System.nanoTime() - t0) / 1_000_000);
                }
                if (warmupWrites > 0) {
                    try {
                        long t0 = System.nanoTime();
                        if (!WarmUp.awaitQuietCompiler(Duration.ofSeconds(60))) {
                            log.info("write path not warmed: the compilers were busy for a minute");
                        } else {
                            WarmUp.Result r = WarmUp.writes(warmupWrites, () -> awaitNoBuilds(views));
                            log.info("write path warmed: {} PUTs in {} ms, after {} ms for the compilers to finish the start's work", r.docs(),
                                    r.millis(), (System.nanoTime() - t0) / 1_000_000 - r.millis());
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (Exception e) {
                        log.warn("write-path warm-up failed", e);
                    }
                }
            });
        }
        ChaiseHttp server;
        ReplicatorModule replicator;
        try {
            server = new ChaiseHttp(http, storage, views, live, List.of());
            // After the wiring, which registers the databases' rules: a new _users gets its _design/_auth.
            if (boolOf(config, "couchdb", "single_node", true)) SystemDatabases.ensure(storage);
            ChaiseHttp s = server;
            replicator = new ReplicatorModule(storage, views.filters(), jobs, server.localAccess(), ReplicatorSettings.of(config, server.uuid(), http, s::port),
                    s::isServerAdmin);
            server.replicator(replicator).start();
            replicator.start();
        } catch (Exception e) {
            log.error("cannot serve on {}:{}", http.bindAddress(), http.port(), e);
            views.close();
            js.close();
            storage.close();
            store.close();
            System.exit(1);
            return;
        }

        Duration drain = Duration.ofSeconds(longOf(live, "chaise", "shutdown_timeout", 30));
        Shutdown shutdown = new Shutdown(() -> {
            log.info("stopping: no new connections; requests in flight have {} s to finish", drain.toSeconds());
            server.close(drain); // requests drained: every commit a request started has finished
            replicator.close(); // runs stop with a last checkpoint; their jobs wait for their leases to run out
            views.close(); // build workers stop and give their jobs back
            js.close();
            storage.close();
            store.close();
            log.info("stopped");
        });
        Runtime.getRuntime().addShutdownHook(new Thread(shutdown::run, "chaise-shutdown"));
        // SIGTERM and Ctrl-C stop cleanly and exit 0 (the JVM's own exit code for them is 143 or 130).
        for (String signal : List.of("TERM", "INT")) {
            Shutdown.onSignal(signal, () -> Thread.ofPlatform().name("chaise-stop").start(() -> {
                shutdown.run();
                System.exit(0);
            }));
        }
        log.info("Chaise {} ready at http://{}:{}/ storage={} data_dir={} config={} in {} ms", version(), host(http.bindAddress()), server.port(),
                store.backendName(), dataDir, files.writeTo() == null ? "(none: changes kept in memory)" : files.writeTo(),
                java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        shutdown.await();
    }

    /** Returns when no index build is running (polled: builds take seconds, a warm-up step a millisecond). */
    private static void awaitNoBuilds(ViewsModule views) {
        while (!views.builds().tasks().list().isEmpty()) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Settings held outside the config store follow its changes. */
    static void applyLive(ConfigStore live, Storage storage, String section, String key) {
        switch (section + "/" + key) {
            case "log/level" -> LogLevel.apply(live.get("log", "level").orElse("info"));
            case "couchdb/max_document_size" -> storage.maxDocumentSize(longOf(live, section, key, Storage.DEFAULT_MAX_DOCUMENT_SIZE));
            case "couchdb/max_attachment_size" -> storage.maxAttachmentSize(longOf(live, section, key, Storage.DEFAULT_MAX_ATTACHMENT_SIZE));
            case "couchdb/max_partition_size" -> storage.maxPartitionSize(longOf(live, section, key, Storage.DEFAULT_MAX_PARTITION_SIZE));
            case "attachments/compressible_types", "attachments/compression_level" -> storage.attachmentCompression(compressionOf(live));
            default -> { }
        }
    }

    /** {@code [attachments] compressible_types} and {@code compression_level}. */
    private static AttachmentCompression compressionOf(ConfigStore c) {
        return new AttachmentCompression(c.get("attachments", "compressible_types").orElse(AttachmentCompression.DEFAULT_TYPES),
                (int) longOf(c, "attachments", "compression_level", AttachmentCompression.DEFAULT_LEVEL));
    }

    private static long longOf(ConfigStore c, String section, String key, long fallback) {
        try {
            return c.get(section, key).map(String::strip).map(Long::parseLong).orElse(fallback);
        } catch (NumberFormatException e) {
            log.warn("[{}] {} is not a number; using {}", section, key, fallback);
            return fallback;
        }
    }

    /** The address a client would use: a wildcard bind is reachable on loopback. */
    private static String host(String bind) {
        return bind.equals("0.0.0.0") || bind.equals("::") ? "127.0.0.1" : bind.contains(":") ? "[" + bind + "]" : bind;
    }

    static String dataDirOf(IniConfig config) {
        String backend = config.get("chaise", "storage", "embedded");
        if (!backend.equals("embedded")) return "(none: " + backend + ")";
        return Path.of(config.get("chaise", "data_dir", "./data")).toAbsolutePath().normalize().toString();
    }

    /**
     * What the server adds to the files' values, at start and after each {@code _config/_reload}:
     * the admin the environment names, every plain-text admin password hashed, and CouchDB's
     * {@code [couchdb] database_dir} and {@code view_index_dir}, which tools read to learn where
     * data lives, showing {@code [chaise] data_dir} as this process uses it (shown, not read:
     * set for this run only).
     */
    static void derive(ConfigStore live, Map<String, String> env, String dataDir) {
        HttpConfig http = HttpConfig.from(live, HttpConfig.defaults());
        addAdminFromEnvironment(live, env, http);
        hashPlainTextAdmins(live, http);
        live.set("couchdb", "database_dir", dataDir, false);
        live.set("couchdb", "view_index_dir", dataDir, false);
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

    /**
     * The fdb backend's settings from {@code [chaise]}: {@code fdb_cluster_file} (default FDB's own),
     * {@code fdb_transaction_timeout_ms} (10000; 0 for none), {@code fdb_retry_limit} (100) and
     * {@code fdb_directory}, the Directory layer path of Chaise's key space ({@code chaise}; names
     * separated by {@code /}; empty for the cluster's whole key space). The embedded engine has
     * none of these: its process owns its directory.
     */
    static FdbKvStore.Options fdbOptions(IniConfig config) {
        FdbKvStore.Options d = FdbKvStore.Options.defaults(config.get("chaise", "fdb_cluster_file").filter(f -> !f.isBlank()).orElse(null));
        return d.withTransactionTimeout(Duration.ofMillis(config.get("chaise", "fdb_transaction_timeout_ms").map(Long::parseLong)
                        .orElse(d.transactionTimeout().toMillis())))
                .withRetryLimit(config.get("chaise", "fdb_retry_limit").map(Integer::parseInt).orElse(d.retryLimit()))
                .withDirectory(config.get("chaise", "fdb_directory").map(FdbKvStore.Options::directoryPath).orElse(d.directory()));
    }

    static KvStore openStorage(IniConfig config) {
        String backend = config.get("chaise", "storage", "embedded");
        return switch (backend) {
            case "embedded" -> EmbeddedKvStore.open(EmbeddedOptions.onDisk(Path.of(config.get("chaise", "data_dir", "./data")).toAbsolutePath()));
            case "embedded-memory" -> EmbeddedKvStore.open(EmbeddedOptions.inMemory());
            case "fdb" -> FdbKvStore.open(fdbOptions(config));
            default -> throw new IllegalArgumentException("[chaise] storage must be embedded, embedded-memory or fdb, not " + backend);
        };
    }

    private static void usage(String error) {
        System.err.println("chaise: " + error);
        System.err.print(USAGE);
        System.exit(2);
    }
}
