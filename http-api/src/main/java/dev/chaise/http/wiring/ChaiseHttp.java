package dev.chaise.http.wiring;

import dev.chaise.http.HttpPipeline;
import dev.chaise.http.HttpServer;
import dev.chaise.http.Router;
import dev.chaise.http.StorageProbe;

import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.auth.Authenticator;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.http.auth.SessionCookies;
import dev.chaise.http.auth.UserDirectory;
import dev.chaise.http.auth.UsersDatabase;
import dev.chaise.http.handlers.Access;
import dev.chaise.http.handlers.AllDocsHandlers;
import dev.chaise.http.handlers.AttachmentHandlers;
import dev.chaise.http.handlers.DesignFunctionHandlers;
import dev.chaise.http.handlers.BulkDocsHandler;
import dev.chaise.http.handlers.ChangesHandler;
import dev.chaise.http.handlers.DatabaseHandlers;
import dev.chaise.http.handlers.DbUpdatesHandler;
import dev.chaise.http.handlers.DocumentHandlers;
import dev.chaise.http.handlers.FauxtonHandlers;
import dev.chaise.http.handlers.MangoHandlers;
import dev.chaise.http.handlers.NodeHandlers;
import dev.chaise.http.handlers.NotImplementedHandlers;
import dev.chaise.http.handlers.PartitionHandlers;
import dev.chaise.http.handlers.PurgeHandlers;
import dev.chaise.http.handlers.ReplicationHandlers;
import dev.chaise.http.handlers.ReplicatorHandlers;
import dev.chaise.http.handlers.ServerHandlers;
import dev.chaise.http.handlers.SessionHandlers;
import dev.chaise.http.handlers.Uuids;
import dev.chaise.http.handlers.NouveauHandlers;
import dev.chaise.http.handlers.ViewHandlers;
import dev.chaise.storage.ServerMetadata;
import dev.chaise.storage.Storage;
import dev.chaise.views.ViewsModule;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The HTTP API put together: authentication, authorization, the built-in routes, and the server.
 * Create it, add more routes to {@link #router()} (before {@link #start()}; the router is not
 * safe to change while serving), then start it.
 */
public final class ChaiseHttp implements AutoCloseable {
    private final HttpConfig config;
    private final Storage storage;
    private final Router router = new Router();
    private final Authenticator authenticator;
    private final Access access;
    private final ConfigStore configStore;
    private final ChangesHandler changes;
    private final dev.chaise.http.metrics.Metrics metrics;
    private final StorageProbe probe;
    private volatile HttpServer server;
    private final ViewsModule views;
    private final String uuid;
    private final ServerHandlers serverHandlers;
    // Set once by replicator(r), before start; null on a server without one (its endpoints answer 501).
    private volatile dev.chaise.replicator.ReplicateRequests replicate;
    private volatile dev.chaise.replicator.SchedulerPages schedulerPages;

    /**
     * @param users directories consulted after the server admins (a {@code _users} database, later)
     */
    public ChaiseHttp(HttpConfig config, Storage storage, ConfigStore configStore, List<UserDirectory> users) {
        this(config, storage, new ViewsModule(storage, null), configStore, users);
    }

    /**
     * @param views map indexes and queries; its JS engine also runs {@code _changes} filter functions
     */
    public ChaiseHttp(HttpConfig config, Storage storage, ViewsModule views, ConfigStore configStore, List<UserDirectory> users) {
        this.config = config;
        this.storage = storage;
        this.configStore = configStore;
        this.views = views;
        // Settings an admin may change over _config are read through this at each use.
        java.util.function.Supplier<HttpConfig> live = () -> HttpConfig.from(configStore, config);
        // The configured secret, else the one generated once and kept in storage (shared by every
        // server on one cluster).
        java.util.concurrent.atomic.AtomicReference<String> stored = new java.util.concurrent.atomic.AtomicReference<>(
                live.get().auth().secret() != null ? null : storage.serverValue(ServerMetadata.COOKIE_SECRET, SessionCookies::newSecret));
        java.util.function.Supplier<String> secret = () -> {
            String s = live.get().auth().secret();
            if (s != null) return s;
            return stored.updateAndGet(k -> k != null ? k : storage.serverValue(ServerMetadata.COOKIE_SECRET, SessionCookies::newSecret));
        };
        String uuid = configStore.get("couchdb", "uuid")
                .orElseGet(() -> storage.serverValue(ServerMetadata.UUID, () -> UUID.randomUUID().toString().replace("-", "")));
        List<UserDirectory> dirs = new ArrayList<>();
        dirs.add(new ServerAdmins(configStore));
        dirs.addAll(users);
        UsersDatabase usersDb = new UsersDatabase(storage, () -> live.get().auth(), configStore);
        dirs.add(usersDb);
        // The database's rules, applied by every database opened for someone (storage's door),
        // whichever path a document takes: the _users and _replicator rules, then views' checks.
        storage.addPolicy(usersDb);
        storage.addPolicy(new dev.chaise.replicator.ReplicatorPolicy());
        storage.addPolicy(new dev.chaise.views.DesignPolicy(views.checks()));
        reduceLimit(views, configStore.get("query_server_config", "reduce_limit").orElse(null));
        configStore.addListener((section, key, value) -> {
            if (section.equals("query_server_config") && key.equals("reduce_limit")) reduceLimit(views, value);
        });
        usersDb.ensureAuthDesigns(); // a users database made before its _design/_auth was kept gets one now
        this.access = new Access(storage);
        this.authenticator = new Authenticator(dirs, new SessionCookies(secret, () -> live.get().auth(), () -> System.currentTimeMillis() / 1000), configStore,
                storage.stats());
        this.probe = new StorageProbe(storage);
        this.metrics = metrics(configStore, storage, views.builds().tasks());
        this.uuid = uuid;
        Uuids uuids = new Uuids(configStore); // one per server: sequential ids keep their order
        serverHandlers = new ServerHandlers(live, storage, uuid, views.builds().tasks()::list, probe::unusableReason, uuids);
        serverHandlers.register(router);
        new SessionHandlers(authenticator).register(router);
        new NodeHandlers(live, configStore, metrics, () -> dev.chaise.http.metrics.SystemInfo.of(openConnections(), openChangesFeeds(),
                storage.backendName(), storage.engineFigures()), views.javascriptEngine()).register(router);
        new DatabaseHandlers(storage, access, configStore).register(router);
        new DbUpdatesHandler(storage).register(router);
        new DocumentHandlers(access, uuids).register(router);
        new BulkDocsHandler(access, uuids).register(router);
        new AllDocsHandlers(access, configStore).register(router);
        new PartitionHandlers(access).register(router);
        changes = new ChangesHandler(views.filters(), access);
        changes.register(router);
        storage.stats().gauge("couchdb.httpd.clients_requesting_changes", "number of clients for continuous _changes", changes::openFeeds);
        new ReplicationHandlers(access).register(router);
        new ViewHandlers(views.queries(), views.maintenance(), access, configStore).register(router);
        new DesignFunctionHandlers(views.functions(), views.queries(), access, configStore).register(router);
        new AttachmentHandlers(access).register(router);
        new PurgeHandlers(access, configStore).register(router);
        new ReplicatorHandlers(() -> replicate, () -> schedulerPages).register(router);
        new NotImplementedHandlers(access).register(router);
        new FauxtonHandlers(configStore).register(router);
        new MangoHandlers(views.queries(), access).register(router);
        new NouveauHandlers(views.search(), access, configStore).register(router);
        serverHandlers.switchedFeatures(() -> views.search().enabled() ? List.of("nouveau") : List.of());
    }

    /** The HTTP side of the server's metrics registry (storage's), and Chaise's own gauges. */
    private dev.chaise.http.metrics.Metrics metrics(ConfigStore configStore, Storage storage, dev.chaise.views.ActiveTasks builds) {
        long window = configStore.get("stats", "interval").map(String::strip).filter(v -> v.matches("[1-9][0-9]{0,5}")).map(Long::parseLong).orElse(10L);
        dev.chaise.stats.Stats stats = storage.stats();
        stats.window(java.time.Duration.ofSeconds(window));
        var m = new dev.chaise.http.metrics.Metrics(stats);
        m.bindTimings(storage::timings);
        stats.counter("chaise.mrview.builds.started", null, "number of index builds started", () -> builds.totals().started());
        stats.counter("chaise.mrview.builds.finished", null, "number of index builds finished, done or failed", () -> builds.totals().finished());
        stats.counter("couchdb.mrview.map_doc", null, "number of changes fed to map functions by index builds", () -> builds.totals().changesIndexed());
        stats.gauge("chaise.mrview.builds.running", "number of index builds running", () -> builds.list().size());
        stats.gauge("chaise.open_connections", "number of open HTTP connections", this::openConnections);
        return m;
    }

    public dev.chaise.http.metrics.Metrics metrics() {
        return metrics;
    }

    /** HTTP connections open now. */
    public int openConnections() {
        HttpServer s = server;
        return s == null ? 0 : s.connections();
    }

    /** The server's uuid ({@code [couchdb] uuid}, else the deployment's): part of every replication id. */
    public String uuid() {
        return uuid;
    }

    /** How the replicator reaches this server's databases: through storage's door, as the replication's user. */
    public dev.chaise.replicator.LocalAccess localAccess() {
        return new dev.chaise.replicator.LocalAccess(storage);
    }

    /** Whether {@code name} is a server admin's ({@code [admins]}, read live): the replicator runs their documents as server admins. */
    public boolean isServerAdmin(String name) {
        return new ServerAdmins(configStore).isAdmin(name);
    }

    /** Serves {@code _replicate}, {@code _scheduler} and replication tasks with {@code r} (before {@link #start()}). */
    public ChaiseHttp replicator(dev.chaise.replicator.ReplicatorModule r) {
        this.replicate = r.requests();
        this.schedulerPages = r.pages();
        serverHandlers.otherTasks(r.tasks()::list);
        return this;
    }

    public Router router() {
        return router;
    }

    public Authenticator authenticator() {
        return authenticator;
    }

    /** {@code _changes} responses being streamed now. */
    public int openChangesFeeds() {
        return changes.openFeeds();
    }

    public Storage storage() {
        return storage;
    }

    public HttpConfig config() {
        return config;
    }

    public ChaiseHttp start() throws InterruptedException {
        server = HttpServer.start(config, new HttpPipeline(router, authenticator, configStore, metrics, config.nodeName()));
        return this;
    }

    /** The bound port (useful when configured as 0). */
    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        close(java.time.Duration.ofSeconds(5));
    }

    /** Stops: {@code /_up} answers 503 from now, then {@link HttpServer#close(java.time.Duration)}. */
    public void close(java.time.Duration drain) {
        probe.stopping("shutting down");
        if (server != null) server.close(drain);
    }

    /** {@code [query_server_config] reduce_limit}: on unless {@code false}, as CouchDB reads it. */
    private static void reduceLimit(ViewsModule views, String value) {
        views.reduceLimit(value == null || !value.strip().equals("false"));
    }
}
