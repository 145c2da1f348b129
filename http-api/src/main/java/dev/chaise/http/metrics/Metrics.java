package dev.chaise.http.metrics;

import dev.chaise.storage.Storage;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The one metrics registry: {@code GET /_node/_local/_stats} renders it as CouchDB's tree
 * ({@link #statsTree}) and {@code GET /_node/_local/_prometheus} as CouchDB 3.5's Prometheus
 * exposition ({@link #prometheus}). Meter names are CouchDB's dotted paths ({@code couchdb.request_time});
 * a tag (method, code, event) is the last path element in the tree and a label in Prometheus.
 * What CouchDB does not have is under {@code chaise.}, so {@code chaise_} in Prometheus.
 *
 * <p>Every event of storage's one timer (StoreTimer, {@link Storage#timings}) is exported without a
 * list of them here: each scrape first registers the names the timer has seen ({@link #refresh}), {@code count.X} as the counter
 * {@code chaise.store.count{event=x}} and any other {@code KIND.X} as the timer
 * {@code chaise.store.KIND{event=x}} (count and total seconds).
 */
public final class Metrics {
    /** The methods CouchDB counts; others are not counted, so a client cannot grow the registry. */
    private static final Set<String> METHODS = Set.of("COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT");
    /** The status codes CouchDB 3.5 declares (stats_descriptions.cfg), shown from the start with 0 as CouchDB shows them. */
    private static final int[] CODES = {200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 414, 415,
        416, 417, 500, 501, 503, 507};
    static final String REQUEST_TIME = "couchdb.request_time";
    static final String METHODS_COUNTER = "couchdb.httpd_request_methods";
    static final String CODES_COUNTER = "couchdb.httpd_status_codes";
    /** CouchDB 3.5's {@code _prometheus} Content-Type (its exposition's own version; Prometheus reads it as the text format). */
    public static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=2.0";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Timer requestTime;
    private final Counter requests;
    private final Map<String, Counter> byMethod = new ConcurrentHashMap<>();
    private final Map<Integer, Counter> byCode = new ConcurrentHashMap<>();
    private volatile java.util.function.Supplier<Map<String, Storage.Timing>> timings = Map::of;
    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    private volatile Map<String, Storage.Timing> last = Map.of();
    private final List<Object> keep = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** @param window what request_time's percentiles cover, CouchDB's {@code [stats] interval} */
    public Metrics(Duration window) {
        requestTime = Timer.builder(REQUEST_TIME)
                .description("length of a request inside Chaise, from its head read to its response written")
                .publishPercentiles(0.5, 0.75, 0.9, 0.95, 0.99, 0.999)
                .serviceLevelObjectives(ms(1), ms(5), ms(10), ms(25), ms(50), ms(100), ms(250), ms(500), ms(1000), ms(2500), ms(5000), ms(10000))
                .distributionStatisticExpiry(window)
                .distributionStatisticBufferLength(2)
                .register(registry);
        requests = Counter.builder("couchdb.httpd.requests").description("number of HTTP requests").register(registry);
        METHODS.forEach(this::methodCounter);
        for (int code : CODES) codeCounter(code);
    }

    private Counter methodCounter(String method) {
        return byMethod.computeIfAbsent(method, m -> Counter.builder(METHODS_COUNTER).tag("method", m)
                .description("number of HTTP requests by method").register(registry));
    }

    private Counter codeCounter(int code) {
        return byCode.computeIfAbsent(code, c -> Counter.builder(CODES_COUNTER).tag("code", Integer.toString(c))
                .description("number of HTTP responses by status code").register(registry));
    }

    private static Duration ms(long n) {
        return Duration.ofMillis(n);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** One request answered. */
    public void request(String method, int status, long nanos) {
        requests.increment();
        requestTime.record(nanos, TimeUnit.NANOSECONDS);
        if (METHODS.contains(method)) methodCounter(method).increment();
        if (status >= 100 && status <= 599) codeCounter(status).increment();
    }

    /** A counter read from elsewhere at each scrape. */
    public void counter(String name, String description, java.util.function.DoubleSupplier read) {
        keep.add(read); // the registry holds function meters' sources weakly
        FunctionCounter.builder(name, read, java.util.function.DoubleSupplier::getAsDouble).description(description).register(registry);
    }

    public void gauge(String name, String description, java.util.function.DoubleSupplier read) {
        Gauge.builder(name, read, java.util.function.DoubleSupplier::getAsDouble).description(description).strongReference(true).register(registry);
    }

    /** A counter of the store timer's {@code count.NAME}, under a CouchDB name. */
    public void storeCount(String name, String description, String countName) {
        counter(name, description, () -> value("count." + countName).count());
    }

    /** Exports every event of the store's timer, now and those it meets later. */
    public void bindTimings(java.util.function.Supplier<Map<String, Storage.Timing>> source) {
        this.timings = source;
    }

    private Storage.Timing value(String key) {
        return last.getOrDefault(key, new Storage.Timing(0, 0));
    }

    /** Takes the timer's snapshot the meters read, and registers names seen for the first time. */
    synchronized void refresh() {
        Map<String, Storage.Timing> now = timings.get();
        last = now;
        for (String key : now.keySet()) {
            if (!registered.add(key)) continue;
            int dot = key.indexOf('.');
            String kind = dot < 0 ? "event" : key.substring(0, dot).toLowerCase(Locale.ROOT);
            String event = key.substring(dot + 1).toLowerCase(Locale.ROOT);
            if (kind.equals("count")) {
                FunctionCounter.builder("chaise.store.count", this, m -> m.value(key).count()).tag("event", event)
                        .description("occurrences counted by the store's timer (StoreTimer)").register(registry);
            } else {
                FunctionTimer.builder("chaise.store." + kind, this, m -> m.value(key).count(), m -> m.value(key).totalNanos(), TimeUnit.NANOSECONDS)
                        .tag("event", event).description("waits timed by the store's timer (StoreTimer): how many, and their total time")
                        .register(registry);
            }
        }
    }

    /**
     * CouchDB 3.5's {@code _prometheus} exposition (couch_prometheus): each metric family after an
     * empty line, its {@code # HELP} and {@code # TYPE}, then its samples, families in name order.
     * Names are the {@code _stats} path joined with {@code _} (CouchDB's {@code couchdb} prefix kept,
     * {@code chaise} for Chaise's own); a counter gets {@code _total}, except the two CouchDB writes
     * with a label ({@code couchdb_httpd_request_methods{method="GET"}},
     * {@code couchdb_httpd_status_codes{code="200"}}); a histogram is a summary in seconds
     * ({@code couchdb_request_time_seconds{quantile="0.5"}}, {@code _sum}, {@code _count}); then
     * {@code couchdb_uptime_seconds}. CouchDB's Erlang VM figures have no counterpart here.
     */
    public String prometheus() {
        refresh();
        Map<String, Family> families = new TreeMap<>();
        for (Meter m : registry.getMeters()) {
            String name = m.getId().getName();
            String base = name.replace('.', '_');
            String help = m.getId().getDescription() == null ? name : m.getId().getDescription();
            Map<String, String> labels = new TreeMap<>();
            m.getId().getTags().forEach(t -> labels.put(t.getKey(), t.getValue()));
            if (m instanceof Counter || m instanceof FunctionCounter) {
                double v = m instanceof Counter c ? c.count() : ((FunctionCounter) m).count();
                boolean labelled = name.equals(METHODS_COUNTER) || name.equals(CODES_COUNTER);
                String fam = labelled || base.endsWith("_total") ? base : base + "_total";
                families.computeIfAbsent(fam, f -> new Family(f, "counter", help)).add(fam, labels, v);
            } else if (m instanceof Gauge g) {
                families.computeIfAbsent(base, f -> new Family(f, "gauge", help)).add(base, labels, g.value());
            } else if (m instanceof Timer t) {
                String fam = base + "_seconds";
                Family f = families.computeIfAbsent(fam, x -> new Family(x, "summary", help));
                HistogramSnapshot snap = t.takeSnapshot();
                for (ValueAtPercentile p : snap.percentileValues()) {
                    Map<String, String> q = new TreeMap<>(labels);
                    q.put("quantile", fmt(p.percentile()));
                    f.add(fam, q, p.value(TimeUnit.SECONDS));
                }
                f.add(fam + "_sum", labels, t.totalTime(TimeUnit.SECONDS));
                f.add(fam + "_count", labels, t.count());
            } else if (m instanceof FunctionTimer t) {
                String fam = base + "_seconds";
                Family f = families.computeIfAbsent(fam, x -> new Family(x, "summary", help));
                f.add(fam + "_sum", labels, t.totalTime(TimeUnit.SECONDS));
                f.add(fam + "_count", labels, t.count());
            }
        }
        Family uptime = new Family("couchdb_uptime_seconds", "counter", "couchdb uptime");
        uptime.add("couchdb_uptime_seconds", Map.of(), java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1000);
        families.put(uptime.name, uptime);
        StringBuilder out = new StringBuilder();
        for (Family f : families.values()) {
            out.append("\n# HELP ").append(f.name).append(' ').append(f.help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
            out.append("# TYPE ").append(f.name).append(' ').append(f.type).append('\n');
            f.samples.sort(java.util.Comparator.comparing((String[] x) -> x[0]));
            for (String[] sample : f.samples) out.append(sample[1]).append('\n');
        }
        return out.toString();
    }

    /** One family of the exposition: its samples as [sort key, line]. */
    private static final class Family {
        final String name;
        final String type;
        final String help;
        final List<String[]> samples = new ArrayList<>();

        Family(String name, String type, String help) {
            this.name = name;
            this.type = type;
            this.help = help;
        }

        void add(String sample, Map<String, String> labels, double value) {
            StringBuilder line = new StringBuilder(sample);
            if (!labels.isEmpty()) {
                line.append('{');
                String sep = "";
                for (var e : labels.entrySet()) {
                    String v = e.getValue().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
                    line.append(sep).append(e.getKey()).append("=\"").append(v).append('"');
                    sep = ",";
                }
                line.append('}');
            }
            // _sum and _count after a summary's quantiles; series in label order
            String key = (sample.endsWith("_sum") ? "2" : sample.endsWith("_count") ? "3" : "1") + line;
            samples.add(new String[] {key, line.append(' ').append(fmt(value)).toString()});
        }
    }

    /** A sample value as CouchDB writes it: integers without a fraction. */
    static String fmt(double v) {
        if (Double.isNaN(v)) return "NaN";
        if (Double.isInfinite(v)) return v > 0 ? "+Inf" : "-Inf";
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return Double.toString(v);
    }

    /** CouchDB's {@code _stats} tree: each leaf {@code {"value", "type", "desc"}}. */
    public Map<String, Object> statsTree() {
        refresh();
        Map<String, Object> root = new TreeMap<>();
        for (Meter m : registry.getMeters()) {
            List<String> path = new ArrayList<>(List.of(m.getId().getName().split("\\.")));
            Tags.of(m.getId().getTags()).forEach(t -> path.add(t.getValue()));
            String desc = m.getId().getDescription() == null ? "" : m.getId().getDescription();
            if (m instanceof Counter c) {
                put(root, path, leaf(c.count(), "counter", desc));
            } else if (m instanceof FunctionCounter c) {
                put(root, path, leaf(c.count(), "counter", desc));
            } else if (m instanceof Gauge g) {
                put(root, path, leaf(g.value(), "gauge", desc));
            } else if (m instanceof FunctionTimer t) {
                path.add("count");
                put(root, path, leaf(t.count(), "counter", desc));
                path.set(path.size() - 1, "seconds");
                put(root, path, leaf(t.totalTime(TimeUnit.SECONDS), "counter", desc));
            } else if (m instanceof Timer t) {
                put(root, path, leaf(histogram(t.takeSnapshot()), "histogram", desc + " (milliseconds)"));
            }
        }
        return root;
    }

    /** CouchDB's histogram value, in milliseconds, from what the registry keeps (no min or higher moments). */
    private static Map<String, Object> histogram(HistogramSnapshot s) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("n", s.count());
        v.put("arithmetic_mean", s.mean(TimeUnit.MILLISECONDS));
        v.put("max", s.max(TimeUnit.MILLISECONDS));
        List<List<Number>> percentiles = new ArrayList<>();
        for (ValueAtPercentile p : s.percentileValues()) {
            if (p.percentile() == 0.5) v.put("median", p.value(TimeUnit.MILLISECONDS));
            // CouchDB names them 50, 75, 90, 95, 99, 999.
            long name = p.percentile() == 0.999 ? 999 : Math.round(p.percentile() * 100);
            percentiles.add(List.of(name, p.value(TimeUnit.MILLISECONDS)));
        }
        v.put("percentile", percentiles);
        List<List<Number>> bins = new ArrayList<>();
        double below = 0;
        for (CountAtBucket b : s.histogramCounts()) {
            bins.add(List.of(b.bucket(TimeUnit.MILLISECONDS), (long) (b.count() - below))); // per bin, not cumulative
            below = b.count();
        }
        v.put("histogram", bins);
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
