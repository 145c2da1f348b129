package dev.chaise.http.metrics;

import dev.chaise.stats.Counter;
import dev.chaise.stats.Histogram;
import dev.chaise.stats.Stats;
import dev.chaise.storage.Storage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/**
 * The HTTP side of the metrics: counts each request ({@link #request}), and shows the server's
 * registry ({@link Stats}, where storage, views and the replicator count too) as
 * {@code GET /_node/_local/_stats} (CouchDB's tree, {@link #statsTree}) and
 * {@code GET /_node/_local/_prometheus} (CouchDB 3.5's exposition, {@link #prometheus}).
 *
 * <p>Every event of storage's one timer (StoreTimer, {@link Storage#timings}) is shown too, without
 * a list of them here: {@code count.X} as {@code chaise.store.count.x} and any other {@code KIND.X}
 * as {@code chaise.store.KIND.x} (how many, and their total seconds).
 */
public final class Metrics {
    /** The status codes CouchDB 3.5 declares (stats_descriptions.cfg), shown from the start with 0 as CouchDB shows them. */
    private static final int[] CODES = {200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 414, 415,
        416, 417, 500, 501, 503, 507};
    static final String METHODS_FAMILY = "couchdb.httpd_request_methods";
    static final String CODES_FAMILY = "couchdb.httpd_status_codes";
    /** Gauges (they go down too) that CouchDB declares as counters: {@code _stats} shows its type, {@code _prometheus} a gauge as couch_prometheus does. */
    private static final Set<String> COUCH_GAUGES = Set.of("couchdb.open_databases", "couchdb.httpd.clients_requesting_changes", "nouveau.active_searches");
    /** CouchDB 3.5's {@code _prometheus} Content-Type (its exposition's own version; Prometheus reads it as the text format). */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=2.0";

    private final Stats stats;
    private final Histogram requestTime;
    private final Counter requests;
    private final Counter aborted;
    /** By method, in the order of {@link #methodIndex}. */
    private final Counter[] byMethod = new Counter[7];
    /** By status code, 100 to 599; a code CouchDB does not declare gets its counter when it first happens. */
    private final AtomicReferenceArray<Counter> byCode = new AtomicReferenceArray<>(600);
    private volatile Supplier<Map<String, Storage.Timing>> timings = Map::of;

    public Metrics(Stats stats) {
        this.stats = stats;
        requestTime = stats.histogram("couchdb.request_time", "time from a request's head read to its response written");
        requests = stats.counter("couchdb.httpd.requests", "number of HTTP requests");
        aborted = stats.counter("couchdb.httpd.aborted_requests", "number of requests whose client went away before the answer");
        String[] methods = {"COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"};
        for (String m : methods) byMethod[methodIndex(m)] = stats.counter(METHODS_FAMILY + "." + m, "method", "number of HTTP " + m + " requests");
        for (int code : CODES) codeCounter(code);
    }

    /** A registry of its own, for a pipeline made without a server (tests). */
    public static Metrics standalone() {
        return new Metrics(new Stats());
    }

    public Stats stats() {
        return stats;
    }

    /** The methods CouchDB counts; others are not counted, so a client cannot grow the registry. */
    private static int methodIndex(String method) {
        return switch (method) {
            case "COPY" -> 0;
            case "DELETE" -> 1;
            case "GET" -> 2;
            case "HEAD" -> 3;
            case "OPTIONS" -> 4;
            case "POST" -> 5;
            case "PUT" -> 6;
            default -> -1;
        };
    }

    private Counter codeCounter(int code) {
        Counter c = byCode.get(code);
        if (c != null) return c;
        byCode.compareAndSet(code, null, stats.counter(CODES_FAMILY + "." + code, "code", "number of HTTP " + code + " responses"));
        return byCode.get(code);
    }

    /** One request answered, or abandoned by its client ({@code sent} false): a few adds, no lookup by name. */
    public void request(String method, int status, boolean sent, long nanos) {
        requests.increment();
        requestTime.recordNanos(nanos);
        int m = methodIndex(method);
        if (m >= 0) byMethod[m].increment();
        if (!sent) aborted.increment();
        else if (status >= 100 && status <= 599) codeCounter(status).increment();
    }

    /** Exports every event of the store's timer, now and those it meets later. */
    public void bindTimings(Supplier<Map<String, Storage.Timing>> source) {
        this.timings = source;
    }

    /** One store timer entry: {@code count.commits} is kind {@code count}, event {@code commits}. */
    private record StoreEvent(String kind, String event, Storage.Timing timing) {}

    private List<StoreEvent> storeEvents() {
        List<StoreEvent> out = new ArrayList<>();
        timings.get().forEach((key, t) -> {
            int dot = key.indexOf('.');
            String kind = dot < 0 ? "event" : key.substring(0, dot).toLowerCase(Locale.ROOT);
            out.add(new StoreEvent(kind, key.substring(dot + 1).toLowerCase(Locale.ROOT), t));
        });
        return out;
    }

    // ---------------------------------------------------------------- _prometheus

    /**
     * CouchDB 3.5's {@code _prometheus} exposition (couch_prometheus_util:couch_to_prom): families
     * in the order of their {@code _stats} paths, each after an empty line with its {@code # HELP}
     * and {@code # TYPE}, then {@code couchdb_uptime_seconds}. A name is {@code couchdb_} and the
     * path joined with {@code _} (its {@code couchdb.} dropped); counters end in {@code _total},
     * except the two labelled ones ({@code couchdb_httpd_request_methods{method="GET"}},
     * {@code couchdb_httpd_status_codes{code="200"}}); a histogram is a summary in seconds; and
     * CouchDB's renamings: {@code couch_log.level.X} is {@code couchdb_couch_log_requests_total{level="X"}},
     * a hits/misses or success/failure pair is a total of both plus the misses or failures. Chaise's
     * own metrics are {@code chaise_}, by the same rules.
     */
    public String prometheus() {
        Exposition out = new Exposition();
        for (Stats.Metric m : stats.all()) family(out, m);
        for (StoreEvent e : storeEvents()) {
            if (e.kind().equals("count")) {
                out.family("chaise_store_count_total", "counter", "occurrences counted by the store's timer (StoreTimer)")
                        .sample("chaise_store_count_total", "event", e.event(), e.timing().count());
            } else {
                String name = "chaise_store_" + e.kind() + "_seconds";
                Family f = out.family(name, "summary", "waits timed by the store's timer (StoreTimer): how many, and their total time");
                f.sample(name + "_sum", "event", e.event(), e.timing().totalNanos() / 1e9);
                f.sample(name + "_count", "event", e.event(), e.timing().count());
            }
        }
        out.family("couchdb_uptime_seconds", "counter", "couchdb uptime")
                .sample("couchdb_uptime_seconds", null, null, java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1000);
        return out.text();
    }

    private void family(Exposition out, Stats.Metric m) {
        String path = m.path();
        boolean couch = !path.startsWith("chaise.");
        String rest = path.startsWith("couchdb.") ? path.substring("couchdb.".length()) : couch ? path : path.substring("chaise.".length());
        String prefix = couch ? "couchdb_" : "chaise_";
        if (m.label() != null) {
            int dot = rest.lastIndexOf('.');
            String value = rest.substring(dot + 1);
            String base = rest.substring(0, dot).replace('.', '_');
            if (path.startsWith("couch_log.level.")) {
                out.family("couchdb_couch_log_requests_total", "counter", "messages logged, by level")
                        .sample("couchdb_couch_log_requests_total", m.label(), value, value(m));
                return;
            }
            boolean couchLabelled = path.startsWith(METHODS_FAMILY + ".") || path.startsWith(CODES_FAMILY + ".");
            String name = prefix + (couchLabelled || base.endsWith("_total") ? base : base + "_total");
            String help = couchLabelled ? (path.startsWith(METHODS_FAMILY) ? "number of HTTP requests by method" : "number of HTTP responses by status code") : m.desc();
            out.family(name, "counter", help).sample(name, m.label(), value, value(m));
            return;
        }
        String base = prefix + rest.replace('.', '_');
        switch (m) {
            case Counter c -> {
                String pair = pairedTotal(path);
                if (pair != null) {
                    // CouchDB's total of a pair: the success/hit counter shows both, under the pair's name
                    String[] p = pair.split("\\|", 3);
                    long total = c.value() + (stats.get(p[1]) instanceof Counter other ? other.value() : 0);
                    out.family(p[0], "counter", p[2]).sample(p[0], null, null, total);
                    return;
                }
                // couch_prometheus's one other renaming: ddoc_cache's misses are its requests' failures
                String name = path.equals("ddoc_cache.miss") ? "couchdb_ddoc_cache_requests_failures_total"
                        : base.endsWith("_total") ? base : base + "_total";
                out.family(name, "counter", m.desc()).sample(name, null, null, c.value());
            }
            case Stats.Gauge g -> out.family(base, "gauge", m.desc()).sample(base, null, null, g.value());
            case Histogram h -> {
                Histogram.Snapshot s = h.snapshot();
                String name = base + "_seconds";
                Family f = out.family(name, "summary", m.desc());
                for (double[] p : s.percentiles()) {
                    String q = p[0] == 999 ? "0.999" : fmt(p[0] / 100);
                    f.sample(name, "quantile", q, p[1] / 1000);
                }
                f.sample(name + "_sum", null, null, s.n() * s.mean() / 1000);
                f.sample(name + "_count", null, null, s.n());
            }
        }
    }

    /** couch_prometheus's totals of a pair: "family|the other counter|help", for the success or hit side. */
    private static String pairedTotal(String path) {
        return switch (path) {
            case "couchdb.auth_cache_hits" -> "couchdb_auth_cache_requests_total|couchdb.auth_cache_misses|users asked of the authentication cache, found or not";
            case "couch_replicator.checkpoints.success" ->
                    "couchdb_couch_replicator_checkpoints_total|couch_replicator.checkpoints.failure|checkpoints recorded or failed";
            case "couch_replicator.responses.success" ->
                    "couchdb_couch_replicator_responses_total|couch_replicator.responses.failure|HTTP responses from remote peers, successful or not";
            case "couch_replicator.stream_responses.success" -> "couchdb_couch_replicator_stream_responses_total"
                    + "|couch_replicator.stream_responses.failure|streamed HTTP responses from remote peers, successful or not";
            case "ddoc_cache.hit" -> "couchdb_ddoc_cache_requests_total|ddoc_cache.miss|design documents asked of the cache, found or not";
            default -> null;
        };
    }

    private static double value(Stats.Metric m) {
        return switch (m) {
            case Counter c -> c.value();
            case Stats.Gauge g -> g.value();
            case Histogram h -> h.snapshot().n();
        };
    }

    /** The families of one exposition, in the order they were first named. */
    private static final class Exposition {
        final Map<String, Family> families = new LinkedHashMap<>();

        Family family(String name, String type, String help) {
            return families.computeIfAbsent(name, n -> new Family(n, type, help));
        }

        String text() {
            StringBuilder out = new StringBuilder();
            for (Family f : families.values()) {
                out.append("\n# HELP ").append(f.name).append(' ').append(f.help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
                out.append("# TYPE ").append(f.name).append(' ').append(f.type).append('\n');
                f.lines.forEach(l -> out.append(l).append('\n'));
            }
            return out.toString();
        }
    }

    private static final class Family {
        final String name;
        final String type;
        final String help;
        final List<String> lines = new ArrayList<>();

        Family(String name, String type, String help) {
            this.name = name;
            this.type = type;
            this.help = help;
        }

        Family sample(String sample, String label, String labelValue, double value) {
            StringBuilder line = new StringBuilder(sample);
            if (label != null) {
                String v = labelValue.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
                line.append('{').append(label).append("=\"").append(v).append("\"}");
            }
            lines.add(line.append(' ').append(fmt(value)).toString());
            return this;
        }
    }

    /** A sample value as CouchDB writes it: integers without a fraction. */
    static String fmt(double v) {
        if (Double.isNaN(v)) return "NaN";
        if (Double.isInfinite(v)) return v > 0 ? "+Inf" : "-Inf";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return Double.toString(v);
    }

    // ---------------------------------------------------------------- _stats

    /** CouchDB's {@code _stats} tree: each leaf {@code {"value", "type", "desc"}}. */
    public Map<String, Object> statsTree() {
        Map<String, Object> root = new TreeMap<>();
        for (Stats.Metric m : stats.all()) {
            List<String> path = List.of(m.path().split("\\."));
            switch (m) {
                case Counter c -> put(root, path, leaf(c.value(), "counter", m.desc()));
                case Stats.Gauge g -> put(root, path, leaf(g.value(), COUCH_GAUGES.contains(m.path()) ? "counter" : "gauge", m.desc()));
                case Histogram h -> put(root, path, leaf(histogram(h.snapshot()), "histogram", m.desc()));
            }
        }
        for (StoreEvent e : storeEvents()) {
            if (e.kind().equals("count")) {
                put(root, List.of("chaise", "store", "count", e.event()),
                        leaf(e.timing().count(), "counter", "occurrences counted by the store's timer (StoreTimer)"));
            } else {
                String desc = "waits timed by the store's timer (StoreTimer): how many, and their total time";
                put(root, List.of("chaise", "store", e.kind(), e.event(), "count"), leaf(e.timing().count(), "counter", desc));
                put(root, List.of("chaise", "store", e.kind(), e.event(), "seconds"), leaf(e.timing().totalNanos() / 1e9, "counter", desc));
            }
        }
        return root;
    }

    /** CouchDB's histogram value (folsom's statistics), in milliseconds; geometric and harmonic means, skewness and kurtosis are not kept. */
    private static Map<String, Object> histogram(Histogram.Snapshot s) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("min", s.min());
        v.put("max", s.max());
        v.put("arithmetic_mean", s.mean());
        v.put("median", s.median());
        v.put("variance", s.variance());
        v.put("standard_deviation", Math.sqrt(s.variance()));
        List<List<Number>> percentiles = new ArrayList<>();
        for (double[] p : s.percentiles()) percentiles.add(List.of((int) p[0], p[1]));
        v.put("percentile", percentiles);
        List<List<Number>> bins = new ArrayList<>();
        for (double[] b : s.bins()) bins.add(List.of(b[0], (long) b[1]));
        v.put("histogram", bins);
        v.put("n", s.n());
        return v;
    }

    private static Map<String, Object> leaf(Object value, String type, String desc) {
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("value", value instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d) ? (Object) d.longValue() : value);
        l.put("type", type);
        l.put("desc", desc);
        return l;
    }

    @SuppressWarnings("unchecked")
    private static void put(Map<String, Object> root, List<String> path, Map<String, Object> leaf) {
        Map<String, Object> node = root;
        for (int i = 0; i < path.size() - 1; i++) {
            Object next = node.computeIfAbsent(path.get(i), k -> new TreeMap<String, Object>());
            if (!(next instanceof Map)) return; // a leaf where a branch would go: keep the first
            node = (Map<String, Object>) next;
        }
        node.putIfAbsent(path.get(path.size() - 1), leaf);
    }
}
