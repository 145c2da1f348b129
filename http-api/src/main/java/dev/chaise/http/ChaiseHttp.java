package dev.chaise.http;

import dev.chaise.http.auth.Access;
import dev.chaise.http.auth.Authenticator;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.http.auth.SessionCookies;
import dev.chaise.http.auth.UserDirectory;
import dev.chaise.http.auth.UsersDatabase;
import dev.chaise.http.handlers.AllDocsHandlers;
import dev.chaise.http.handlers.AttachmentHandlers;
import dev.chaise.http.handlers.BulkDocsHandler;
import dev.chaise.http.handlers.ChangesHandler;
import dev.chaise.http.handlers.DatabaseHandlers;
import dev.chaise.http.handlers.DocumentHandlers;
import dev.chaise.http.handlers.MangoHandlers;
import dev.chaise.http.handlers.NodeHandlers;
import dev.chaise.http.handlers.NotImplementedHandlers;
import dev.chaise.http.handlers.ReplicationHandlers;
import dev.chaise.http.handlers.ServerHandlers;
import dev.chaise.http.handlers.SessionHandlers;
import dev.chaise.http.handlers.ViewHandlers;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.ServerMetadata;
import dev.chaise.views.ViewService;
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
    private final DocumentStore docs;
    private final Router router = new Router();
    private final Authenticator authenticator;
    private final Access access;
    private final ConfigStore configStore;
    private final ChangesHandler changes;
    private HttpServer server;

    /**
     * @param users directories consulted after the server admins (a {@code _users} database, later)
     */
    public ChaiseHttp(HttpConfig config, DocumentStore docs, ConfigStore configStore, List<UserDirectory> users) {
        this(config, docs, new ViewService(docs, null), configStore, users);
    }

    /**
     * @param views map indexes and queries; its JS engine also runs {@code _changes} filter functions
     */
    public ChaiseHttp(HttpConfig config, DocumentStore docs, ViewService views, ConfigStore configStore, List<UserDirectory> users) {
        this.config = config;
        this.docs = docs;
        this.configStore = configStore;
        String secret = config.auth().secret() != null ? config.auth().secret()
                : configStore.get("chttpd_auth", "secret")
                        .orElseGet(() -> ServerMetadata.getOrCreate(docs.kv(), ServerMetadata.COOKIE_SECRET, SessionCookies::newSecret));
        String uuid = configStore.get("couchdb", "uuid")
                .orElseGet(() -> ServerMetadata.getOrCreate(docs.kv(), ServerMetadata.UUID, () -> UUID.randomUUID().toString().replace("-", "")));
        List<UserDirectory> dirs = new ArrayList<>();
        dirs.add(new ServerAdmins(configStore));
        dirs.addAll(users);
        UsersDatabase usersDb = new UsersDatabase(docs, config.auth());
        dirs.add(usersDb);
        this.authenticator = new Authenticator(dirs, new SessionCookies(secret, config.auth(), () -> System.currentTimeMillis() / 1000));
        this.access = new Access(docs.databases());
        new ServerHandlers(config, docs, uuid, views::activeTasks).register(router);
        new SessionHandlers(authenticator).register(router);
        new NodeHandlers(config, configStore).register(router);
        new DatabaseHandlers(docs, access).register(router);
        new DocumentHandlers(docs, views, usersDb, access).register(router);
        new BulkDocsHandler(docs, views, usersDb, access).register(router);
        new AllDocsHandlers(docs, access).register(router);
        changes = new ChangesHandler(docs, views, access);
        changes.register(router);
        new ReplicationHandlers(docs, access).register(router);
        new ViewHandlers(views, access).register(router);
        new AttachmentHandlers(docs, views, access).register(router);
        new NotImplementedHandlers(access).register(router);
        new MangoHandlers(docs, access).register(router); // after: its GET _index replaces a 501
    }

    public Router router() {
        return router;
    }

    public Access access() {
        return access;
    }

    public Authenticator authenticator() {
        return authenticator;
    }

    /** {@code _changes} responses being streamed now. */
    public int openChangesFeeds() {
        return changes.openFeeds();
    }

    public DocumentStore docs() {
        return docs;
    }

    public HttpConfig config() {
        return config;
    }

    public ChaiseHttp start() throws InterruptedException {
        server = HttpServer.start(config, new HttpPipeline(router, authenticator, configStore));
        return this;
    }

    /** The bound port (useful when configured as 0). */
    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        if (server != null) server.close();
    }
}
