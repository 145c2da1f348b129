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
 * ({@link #statsTree}) and {@code GET /_node/_local/_prometheus} in the Prometheus text format
 * ({@link #prometheus}). Meter names are CouchDB's dotted paths ({@code couchdb.request_time});
 * a tag (method, code, event) is the last path element in the tree and a label in Prometheus.
 *
 * <p>Every event of storage's one timer (StoreTimer, {@link Storage#timings}) is exported without a
 * list of them here: each scrape first registers the names the timer has seen ({@link #refresh}), {@code count.X} as the counter
 * {@code chaise.store.count{event=x}} and any other {@code KIND.X} as the timer
 * {@code chaise.store.KIND{event=x}} (count and total seconds).
 */
public final class Metrics {
    /** The methods CouchDB counts; others are not counted, so a client cannot grow the registry. */
    private static final Set<String> METHODS = Set.of("COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT");
    static final String REQUEST_TIME = "couchdb.request_time";

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
        if (METHODS.contains(method)) {
            byMethod.computeIfAbsent(method, m -> Counter.builder("couchdb.httpd_request_methods").tag("method", m)
                    .description("number of HTTP requests by method").register(registry)).increment();
        }
        if (status >= 100 && status <= 599) {
            byCode.computeIfAbsent(status, c -> Counter.builder("couchdb.httpd_status_codes").tag("code", Integer.toString(c))
                    .description("number of HTTP responses by status code").register(registry)).increment();
        }
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

    /** The Prometheus text format (0.0.4). */
    public String prometheus() {
        refresh();
        return registry.scrape();
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
