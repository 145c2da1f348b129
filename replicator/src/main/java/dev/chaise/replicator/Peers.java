package dev.chaise.replicator;

import dev.chaise.views.DocFilters;
import java.net.http.HttpClient;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Owns reaching a replication's endpoints: a local database through {@link LocalAccess} as the
 * replication's user, a remote one over the one {@link HttpClient} this server's jobs share
 * (connections pooled across jobs).
 */
final class Peers implements AutoCloseable {
    private final LocalAccess access;
    private final DocFilters filters;
    private final HttpClient http;

    private final ReplicatorMetrics metrics;

    Peers(LocalAccess access, DocFilters filters, ReplicatorConfig config, ReplicatorMetrics metrics) {
        this.access = access;
        this.metrics = metrics;
        this.filters = filters;
        this.http = client(config);
    }

    /** One side of a replication; nothing is opened until the run asks (source first, then target, as CouchDB). */
    Peer peer(Endpoint e, ReplicationSpec spec) {
        return switch (e) {
            case Endpoint.Local l -> new LocalPeer(l.db(), access, filters, spec.user());
            case Endpoint.Remote r -> new HttpPeer(http, r, spec.connectionTimeoutMs(), spec.retries(), metrics);
        };
    }

    private static HttpClient client(ReplicatorConfig c) {
        HttpClient.Builder b = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofMillis(c.defaults().connectionTimeoutMs()))
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(Executors.newVirtualThreadPerTaskExecutor());
        if (!c.verifySsl()) b.sslContext(trustAll()); // [replicator] verify_ssl_certificates = false, CouchDB's default
        return b.build();
    }

    private static SSLContext trustAll() {
        try {
            X509ExtendedTrustManager tm = new X509ExtendedTrustManager() {
                public void checkClientTrusted(X509Certificate[] c, String a) {}

                public void checkServerTrusted(X509Certificate[] c, String a) {}

                public void checkClientTrusted(X509Certificate[] c, String a, java.net.Socket s) {}

                public void checkServerTrusted(X509Certificate[] c, String a, java.net.Socket s) {}

                public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) {}

                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            };
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {tm}, new SecureRandom());
            return ctx;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        http.shutdownNow(); // live feeds would otherwise keep it open
    }
}
