package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.Engine;
import org.graalvm.polyglot.EnvironmentAccess;
import org.graalvm.polyglot.HostAccess;
import org.graalvm.polyglot.PolyglotAccess;
import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Source;
import org.graalvm.polyglot.Value;
import org.graalvm.polyglot.io.IOAccess;
import org.graalvm.polyglot.proxy.ProxyExecutable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link JsEngine} on GraalJS (interpreter mode on a stock JDK). One shared {@link Engine} caches
 * parsed code across contexts; each compiled design document keeps a bounded pool of contexts, so
 * platform workers and virtual threads alike borrow one, use it alone, and give it back.
 *
 * <p>Sandbox: no host access or class lookup, no IO, threads, native code, environment or other
 * languages; GraalJS's {@code load}, {@code print}, {@code Java} and {@code Polyglot} globals are
 * off. Documents cross as one JSON string each way. A watchdog cancels any call running longer
 * than the timeout; the cancelled context is discarded, never returned to its pool.
 */
public final class GraalJsEngine implements JsEngine {
    private static final Logger log = LoggerFactory.getLogger(GraalJsEngine.class);
    private static final Source PRELUDE = prelude();

    /**
     * @param timeout per call (CouchDB's os_process_timeout)
     * @param poolSize contexts kept per design document
     * @param maxAllocation bytes one call may allocate on the heap before it is stopped, as a
     *     timeout is: GraalJS community has no heap limit per context, and a function that keeps
     *     what it allocates would otherwise take the server's heap
     */
    public record Options(Duration timeout, int poolSize, long maxAllocation) {
        public static final long DEFAULT_MAX_ALLOCATION = 512L << 20;

        public Options(Duration timeout, int poolSize) {
            this(timeout, poolSize, DEFAULT_MAX_ALLOCATION);
        }

        public static Options defaults() {
            return new Options(Duration.ofSeconds(5), Math.max(2, Runtime.getRuntime().availableProcessors() * 2));
        }
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

    private final Engine engine;
    private final Options options;
    private final Map<String, BlockingQueue<Slot>> pools = new ConcurrentHashMap<>();
    private final Set<Slot> running = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService watchdog;
    /** The watchdog's period; it ticks only while a call runs (an idle tick every 10-20 ms was 0.5-2 % of a loaded server's samples). */
    private final long period;
    /** A tick is scheduled: set by whoever schedules it, cleared by the last tick, which finds nothing running. */
    private final java.util.concurrent.atomic.AtomicBoolean ticking = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * Calls from virtual threads run here: the JVM counts allocated bytes per platform thread
     * only, and the allocation limit needs that count.
     */
    private final java.util.concurrent.ExecutorService platform;
    private volatile boolean reduceLimit = true;

    /** Counted into a registry of its own until the server's is given ({@link #countInto}). */
    private volatile QueryServerStats counts = new QueryServerStats(new dev.chaise.stats.Stats());

    @Override
    public void countInto(dev.chaise.stats.Stats stats) {
        counts = new QueryServerStats(stats);
    }

    private GraalJsEngine(Options options) {
        this.options = options;
        this.engine = Engine.newBuilder("js")
                .option("engine.WarnInterpreterOnly", "false")
                .build();
        this.watchdog = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("js-watchdog").daemon().factory());
        this.platform = Executors.newFixedThreadPool(options.poolSize(), Thread.ofPlatform().name("js-", 0).daemon().factory());
        if (THREADS.isThreadAllocatedMemorySupported() && !THREADS.isThreadAllocatedMemoryEnabled()) THREADS.setThreadAllocatedMemoryEnabled(true);
        // Often enough that a runaway allocation overshoots the limit by tens of MB at most.
        this.period = Math.max(10, Math.min(20, options.timeout().toMillis() / 10));
    }

    /** {@code s} runs from now on: the watchdog ticks until nothing runs. */
    private void watch(Slot s) {
        running.add(s);
        if (!ticking.get() && ticking.compareAndSet(false, true)) scheduleTick();
    }

    private void scheduleTick() {
        try {
            watchdog.schedule(this::tick, period, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            ticking.set(false);
        }
    }

    private void tick() {
        cancelOverdue();
        if (running.isEmpty()) {
            ticking.set(false);
            // A call that began after the check saw the flag still set and scheduled nothing: go on for it.
            if (running.isEmpty() || !ticking.compareAndSet(false, true)) return;
        }
        scheduleTick();
    }

    public static GraalJsEngine create(Options options) {
        return new GraalJsEngine(options);
    }

    /** With default options; also what benchmarks load by class name. */
    public static GraalJsEngine createDefault() {
        return create(Options.defaults());
    }

    private record Failure(String error, String reason) {}

    /** One context with its functions compiled, borrowed by one thread at a time. */
    private final class Slot {
        final Context context;
        final Value api;
        final String poolKey;
        volatile long deadline;
        volatile boolean cancelled;
        /** Why the watchdog stopped the call: {@code timeout} or {@code memory_limit}. */
        volatile String cancelReason = "timeout";
        volatile long runnerId;
        volatile long allocatedAtStart = -1;

        Slot(String poolKey) {
            this.poolKey = poolKey;
            this.context = Context.newBuilder("js")
                    .engine(engine)
                    .allowHostAccess(HostAccess.NONE)
                    .allowHostClassLookup(name -> false)
                    .allowIO(IOAccess.NONE)
                    .allowCreateThread(false)
                    .allowNativeAccess(false)
                    .allowPolyglotAccess(PolyglotAccess.NONE)
                    .allowEnvironmentAccess(EnvironmentAccess.NONE)
                    .allowCreateProcess(false)
                    .option("js.load", "false")
                    .option("js.print", "false")
                    .option("js.console", "false")
                    .option("js.ecmascript-version", "2024")
                    // As couchjs without --eval: no eval(), no Function('...'); design functions are
                    // compiled by the host, through __compile, which the prelude keeps to itself.
                    .option("js.allow-eval", "false")
                    .build();
            context.getBindings("js").putMember("__compile",
                    (ProxyExecutable) args -> context.eval(Source.newBuilder("js", args[0].asString(), "<eval>").buildLiteral()));
            context.eval(PRELUDE);
            this.api = context.getBindings("js").getMember("__chaise");
        }

        /** Runs {@code body} under the watchdog and counts it as {@code n} calls of {@code kind}. */
        <T> T call(QueryServerStats.Kind kind, int n, java.util.function.Supplier<T> body) {
            QueryServerStats c = counts;
            c.prompts.increment();
            long start = System.nanoTime();
            try {
                return call(body);
            } catch (RuntimeException e) {
                c.errors.increment();
                throw e;
            } finally {
                c.called(kind, n, System.nanoTime() - start);
            }
        }

        /** Runs {@code body} under the watchdog, on a platform thread; a cancelled call marks the slot dead. */
        private <T> T call(java.util.function.Supplier<T> body) {
            if (!Thread.currentThread().isVirtual()) return watched(body);
            try {
                return java.util.concurrent.CompletableFuture.supplyAsync(() -> watched(body), platform).join();
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                if (e.getCause() instanceof Error err) throw err;
                throw e;
            }
        }

        private <T> T watched(java.util.function.Supplier<T> body) {
            runnerId = Thread.currentThread().threadId();
            allocatedAtStart = THREADS.getCurrentThreadAllocatedBytes();
            deadline = System.nanoTime() + options.timeout().toNanos();
            watch(this);
            try {
                return body.get();
            } finally {
                running.remove(this);
                deadline = 0;
                allocatedAtStart = -1;
            }
        }

        /**
         * Runs {@code body} (a host callback from inside a call) off the clock: neither its time nor
         * what it allocates counts against the call, which gets a fresh allowance when it resumes,
         * as CouchDB times each prompt to its query server.
         */
        <T> T offTheClock(java.util.function.Supplier<T> body) {
            long wasDeadline = deadline;
            long wasAllocated = allocatedAtStart;
            deadline = 0;
            allocatedAtStart = -1;
            boolean answered = false;
            try {
                T result = body.get();
                answered = true;
                return result;
            } finally {
                if (answered) {
                    allocatedAtStart = THREADS.getCurrentThreadAllocatedBytes();
                    deadline = System.nanoTime() + options.timeout().toNanos();
                } else {
                    // A callback that failed gives no fresh allowance: a function that catches the
                    // failure and calls again cannot run on forever.
                    allocatedAtStart = wasAllocated;
                    deadline = wasDeadline;
                }
            }
        }

        /** The error name and reason for a call the engine stopped, or for a plain failure. */
        Failure failure(PolyglotException e, String plain) {
            if (!e.isCancelled()) return new Failure(plain, message(e));
            return "memory_limit".equals(cancelReason)
                    ? new Failure("memory_limit", "the function allocated more than " + (options.maxAllocation() >> 20) + " MB in one call")
                    : new Failure("timeout", "timeout");
        }

        void release() {
            if (cancelled) {
                close();
                return;
            }
            BlockingQueue<Slot> pool = pools.get(poolKey);
            if (pool == null || !pool.offer(this)) close();
        }

        void close() {
            (cancelled ? counts.errorExits : counts.exits).increment();
            try {
                context.close(true);
            } catch (RuntimeException e) {
                log.debug("closing a JS context", e);
            }
        }
    }

    private void cancelOverdue() {
        long now = System.nanoTime();
        for (Slot s : running) {
            long d = s.deadline;
            if (d != 0 && now - d > 0 && !s.cancelled) {
                s.cancelled = true;
                log.warn("a JavaScript call ran over {} ms and was stopped", options.timeout().toMillis());
                s.close();
                continue;
            }
            long start = s.allocatedAtStart;
            if (start >= 0 && !s.cancelled && THREADS.getThreadAllocatedBytes(s.runnerId) - start > options.maxAllocation()) {
                s.cancelReason = "memory_limit";
                s.cancelled = true;
                log.warn("a JavaScript call allocated over {} MB and was stopped", options.maxAllocation() >> 20);
                s.close();
            }
        }
    }

    /** Borrows a context for {@code key}, creating (and initializing) one if the pool is empty. */
    private Slot borrow(String key, QueryServerStats.Kind compile, java.util.function.Consumer<Slot> init) throws JsFunctionException {
        QueryServerStats c = counts;
        c.acquired.increment();
        BlockingQueue<Slot> pool = pools.computeIfAbsent(key, k -> new ArrayBlockingQueue<>(options.poolSize()));
        Slot s = pool.poll();
        if (s != null) return s;
        long start = System.nanoTime();
        s = new Slot(key);
        c.starts.increment();
        c.called(QueryServerStats.Kind.SPAWN_PROC, 1, System.nanoTime() - start);
        start = System.nanoTime();
        try {
            init.accept(s);
            c.called(compile, 1, System.nanoTime() - start);
        } catch (PolyglotException e) {
            c.errors.increment();
            s.close();
            throw new JsFunctionException("compilation_error", message(e));
        }
        return s;
    }


    private static JsonNode parse(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (IOException e) {
            throw new IllegalStateException("the JS engine returned something that is not JSON", e);
        }
    }

    static String message(PolyglotException e) {
        if (e.isCancelled() || e.isInterrupted()) return "timeout";
        String m = e.getMessage();
        return m == null ? e.toString() : m;
    }

    private static void logLines(String ddocId, JsonNode lines) {
        if (lines != null) for (JsonNode l : lines) log.info("{}: {}", ddocId, l.asText());
    }

    // ---------------------------------------------------------------- languages

    private static final List<String> COFFEE_FILES = List.of("coffee-script", "lexer", "parser", "rewriter", "nodes", "scope", "helpers", "sourcemap");
    /** CoffeeScript's compiler modules as {@code {"name.js": source}}, or null when the build left them out. */
    private static final String COFFEE_MODULES = coffeeModules();
    private static final String COFFEESCRIPT = "coffeescript";
    /** Compiled CoffeeScript by source: design functions are compiled again for every program opened. */
    private final Map<String, String> coffeeCache = new ConcurrentHashMap<>();

    private static String coffeeModules() {
        ObjectNode files = Json.NODES.objectNode().put("version", "");
        for (String f : COFFEE_FILES) {
            try (InputStream in = GraalJsEngine.class.getResourceAsStream("coffee-script/" + f + ".js")) {
                if (in == null) return null;
                files.put(f + ".js", new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return Json.write(files);
    }

    @Override
    public boolean speaks(String language) {
        return JAVASCRIPT.equals(language) || (COFFEESCRIPT.equals(language) && COFFEE_MODULES != null);
    }

    private List<String> inJavaScript(String language, List<String> sources) throws JsFunctionException {
        if (!COFFEESCRIPT.equals(language)) return sources;
        List<String> out = new ArrayList<>(sources.size());
        for (String s : sources) out.add(s.startsWith("_") ? s : coffee(s)); // built-in reduces stay
        return out;
    }

    /** A CoffeeScript design document with its functions (shows, lists, updates, filters, validate_doc_update) compiled. */
    private JsonNode inJavaScript(JsonNode ddoc) throws JsFunctionException {
        if (!COFFEESCRIPT.equals(ddoc.path("language").asText()) || !(ddoc instanceof ObjectNode o)) return ddoc;
        ObjectNode out = o.deepCopy();
        for (String group : List.of("shows", "lists", "updates", "filters")) {
            if (!(out.get(group) instanceof ObjectNode fns)) continue;
            for (Map.Entry<String, JsonNode> e : fns.properties()) if (e.getValue().isTextual()) e.setValue(Json.NODES.textNode(coffee(e.getValue().textValue())));
        }
        JsonNode vdu = out.get("validate_doc_update");
        if (vdu != null && vdu.isTextual()) out.put("validate_doc_update", coffee(vdu.textValue()));
        return out;
    }

    /** couchjs' util.js: {@code CoffeeScript.compile(source, {bare: true})}; a syntax error is a compilation_error. */
    private String coffee(String source) throws JsFunctionException {
        if (COFFEE_MODULES == null) throw new JsFunctionException("compilation_error", "CoffeeScript is not bundled in this build");
        String done = coffeeCache.get(source);
        if (done != null) return done;
        Slot slot = borrow(COFFEESCRIPT, QueryServerStats.Kind.ADD_FUN, s -> s.api.invokeMember("loadCoffee", COFFEE_MODULES));
        JsonNode r;
        // The compiler is the build's code, not the design document's: no time limit (its first
        // run, in a fresh context, takes seconds while the interpreter warms up).
        long t0 = System.nanoTime();
        try {
            r = parse(slot.api.invokeMember("coffee", source).asString());
        } catch (PolyglotException e) {
            throw new JsFunctionException("compilation_error", message(e));
        } finally {
            slot.release();
        }
        log.debug("CoffeeScript compiled in {} ms", (System.nanoTime() - t0) / 1_000_000);
        if (r.has("error")) throw new JsFunctionException("compilation_error", r.path("error").asText() + " (" + source + ")");
        if (coffeeCache.size() > 10_000) coffeeCache.clear();
        coffeeCache.put(source, r.path("js").asText());
        return r.path("js").asText();
    }

    // ---------------------------------------------------------------- map

    /** What map and reduce functions may {@code require}: {@code views.lib} only, as in CouchDB. */
    private static String viewsLibRoot(JsonNode lib) {
        ObjectNode root = Json.NODES.objectNode();
        if (lib != null) root.putObject("views").set("lib", lib);
        return Json.write(root);
    }

    @Override
    public MapProgram mapProgram(MapSource source) throws JsFunctionException {
        return mapProgram(source, "compileMaps");
    }

    @Override
    public MapProgram indexProgram(MapSource source) throws JsFunctionException {
        return mapProgram(source, "compileIndexes");
    }

    /** @param compile the prelude's member that compiles the functions: views' maps, or Nouveau's index functions */
    private MapProgram mapProgram(MapSource source, String compile) throws JsFunctionException {
        String rootJson = viewsLibRoot(source.lib());
        String maps = Json.write(inJavaScript(source.language(), source.maps()));
        String key = compile + "\u0000" + source.ddocId() + "\u0000" + maps + "\u0000" + rootJson;
        java.util.function.Consumer<Slot> init = s -> {
            s.api.invokeMember("init", rootJson);
            s.api.invokeMember(compile, maps);
        };
        Slot first = borrow(key, QueryServerStats.Kind.ADD_FUN, init);
        int views = source.maps().size();
        return new MapProgram() {
            Slot slot = first;

            /** After a timeout the context is gone: the next document gets a fresh one. */
            private Slot live() {
                if (slot.cancelled) {
                    try {
                        slot = borrow(key, QueryServerStats.Kind.ADD_FUN, init);
                    } catch (JsFunctionException e) {
                        throw new IllegalStateException("compiled before, so it compiles again", e);
                    }
                }
                return slot;
            }

            @Override
            public List<MapOutcome> map(String docJson) {
                Slot slot = live();
                String out;
                try {
                    out = slot.call(QueryServerStats.Kind.MAP, 1, () -> slot.api.invokeMember("map", docJson).asString());
                } catch (PolyglotException e) {
                    Failure why = slot.failure(e, "runtime_error");
                    List<MapOutcome> failed = new ArrayList<>(views);
                    for (int i = 0; i < views; i++) failed.add(new MapOutcome.Failed(why.error(), why.reason()));
                    return failed;
                }
                JsonNode res = parse(out);
                logLines(source.ddocId(), res.get("l"));
                return outcomes(res.get("r"));
            }

            /** Batches cross once; a batch that times out is retried doc by doc, so only the runaway doc fails. */
            @Override
            public List<List<MapOutcome>> mapAll(List<String> docsJson) {
                if (docsJson.size() <= 1) return MapProgram.super.mapAll(docsJson);
                StringBuilder sb = new StringBuilder(docsJson.size() * 512).append('[');
                for (int i = 0; i < docsJson.size(); i++) {
                    if (i > 0) sb.append(',');
                    sb.append(docsJson.get(i));
                }
                return mapArray(sb.append(']').toString(), docsJson.size(), () -> MapProgram.super.mapAll(docsJson));
            }

            /** Trees are written as one JSON array by one generator, not as a string each to be joined. */
            @Override
            public List<List<MapOutcome>> mapAllDocs(List<? extends JsonNode> docs) {
                if (docs.size() <= 1) return MapProgram.super.mapAllDocs(docs);
                return mapArray(Json.write(docs), docs.size(), () -> MapProgram.super.mapAllDocs(docs));
            }

            /** {@code n} documents as one JSON array through every map function; {@code oneByOne} if the call runs away. */
            private List<List<MapOutcome>> mapArray(String all, int n, java.util.function.Supplier<List<List<MapOutcome>>> oneByOne) {
                String out;
                Slot slot = live();
                try {
                    out = slot.call(QueryServerStats.Kind.MAP, n, () -> slot.api.invokeMember("mapAll", all).asString());
                } catch (PolyglotException e) {
                    if (!e.isCancelled()) throw e;
                    return oneByOne.get(); // each alone: see which one runs away
                }
                JsonNode res = parse(out);
                logLines(source.ddocId(), res.get("l"));
                List<List<MapOutcome>> result = new ArrayList<>(n);
                for (JsonNode perDoc : res.get("r")) result.add(outcomes(perDoc));
                return result;
            }

            private List<MapOutcome> outcomes(JsonNode perView) {
                List<MapOutcome> outcomes = new ArrayList<>(views);
                for (JsonNode r : perView) {
                    if (r.isObject()) {
                        outcomes.add(new MapOutcome.Failed("runtime_error", r.path("error").asText()));
                        continue;
                    }
                    List<MapOutcome.Emit> emits = new ArrayList<>(r.size());
                    for (JsonNode e : r) emits.add(new MapOutcome.Emit(e.get(0), e.get(1)));
                    outcomes.add(new MapOutcome.Rows(emits));
                }
                return outcomes;
            }

            @Override
            public void close() {
                slot.release();
            }
        };
    }

    /** One pooled context compiles every function checked: a check keeps nothing, so they can share it. */
    private static final String CHECK_POOL = "check";

    @Override
    public About about() {
        return new About("graaljs", engine.getVersion());
    }

    @Override
    public void checkCompiles(String source) throws JsFunctionException {
        Slot slot = borrow(CHECK_POOL, QueryServerStats.Kind.ADD_FUN, s -> {});
        try {
            slot.call(QueryServerStats.Kind.ADD_FUN, 1, () -> slot.api.invokeMember("check", source));
        } catch (PolyglotException e) {
            throw new JsFunctionException("compilation_error", slot.failure(e, "compilation_error").reason());
        } finally {
            slot.release();
        }
    }

    // ---------------------------------------------------------------- reduce

    @Override
    public void reduceLimit(boolean on) {
        reduceLimit = on;
    }

    /** CouchDB's views.js: an output over 4096 bytes must be under half the input's size. */
    static final int REDUCE_LIMIT_BYTES = 4096;

    @Override
    public ReduceProgram reduceProgram(ReduceSource source) throws JsFunctionException {
        String rootJson = viewsLibRoot(source.lib());
        String reduces = Json.write(inJavaScript(source.language(), source.reduces()));
        String key = "reduce\u0000" + source.ddocId() + "\u0000" + reduces + "\u0000" + rootJson;
        Slot slot = borrow(key, QueryServerStats.Kind.ADD_FUN, s -> {
            s.api.invokeMember("init", rootJson);
            s.api.invokeMember("compileReduces", reduces);
        });
        return new ReduceProgram() {
            private JsonNode run(int index, List<JsonNode> keys, List<JsonNode> values, boolean rereduce) throws JsFunctionException {
                try {
                    String k = rereduce ? "null" : Json.write(keys);
                    String v = Json.write(values);
                    String out = slot.call(QueryServerStats.Kind.REDUCE, 1, () -> slot.api.invokeMember("reduce", index, k, v, rereduce).asString());
                    if (out.startsWith("\u0000")) {
                        log.info("{} reduce function {} raised exception {}", source.ddocId(), index, out.substring(1));
                        return NullNode.getInstance();
                    }
                    int input = (rereduce ? 0 : k.length()) + v.length();
                    if (reduceLimit && out.length() > REDUCE_LIMIT_BYTES && out.length() * 2L > input) {
                        throw new JsFunctionException("reduce_overflow_error",
                                "Reduce output must shrink more rapidly: input size: " + input + " output size: " + out.length());
                    }
                    return parse(out);
                } catch (PolyglotException e) {
                    Failure why = slot.failure(e, "reduce_runtime_error");
                    throw new JsFunctionException(why.error(), why.reason());
                }
            }

            @Override
            public JsonNode reduce(int index, List<JsonNode> keys, List<JsonNode> values) throws JsFunctionException {
                return run(index, keys, values, false);
            }

            @Override
            public JsonNode rereduce(int index, List<JsonNode> values) throws JsFunctionException {
                return run(index, null, values, true);
            }

            @Override
            public void close() {
                slot.release();
            }
        };
    }

    // ---------------------------------------------------------------- filters

    @Override
    public FilterProgram filterProgram(DesignSource source) throws JsFunctionException {
        String rootJson = Json.write(inJavaScript(source.ddoc()));
        JsonNode filters = inJavaScript(source.ddoc()).get("filters");
        String filtersJson = filters == null ? "null" : Json.write(filters);
        String key = "filter\u0000" + source.ddocId() + "\u0000" + rootJson;
        Slot slot = borrow(key, QueryServerStats.Kind.DDOC_NEW, s -> {
            s.api.invokeMember("init", rootJson);
            s.api.invokeMember("setFilters", filtersJson);
        });
        return new FilterProgram() {
            @Override
            public boolean has(String name) {
                return slot.call(QueryServerStats.Kind.DDOC_FILTER, 1, () -> slot.api.invokeMember("hasFilter", name).asBoolean());
            }

            @Override
            public void compile(String name) throws JsFunctionException {
                try {
                    slot.call(QueryServerStats.Kind.ADD_FUN, 1, () -> slot.api.invokeMember("compileFilter", name));
                } catch (PolyglotException e) {
                    throw new JsFunctionException("compilation_error", message(e));
                }
            }

            @Override
            public boolean filter(String name, String docJson, JsonNode req) throws JsFunctionException {
                String r = Json.write(req);
                try {
                    // One call per document: from a virtual thread each call is a hand-off.
                    record Filtered(boolean pass, String logs) {}
                    Filtered f = slot.call(QueryServerStats.Kind.DDOC_FILTER, 1, () -> {
                        slot.api.invokeMember("compileFilter", name);
                        boolean pass = slot.api.invokeMember("filter", name, docJson, r).asBoolean();
                        return new Filtered(pass, slot.api.invokeMember("logs").asString());
                    });
                    logLines(source.ddocId(), parse(f.logs()));
                    return f.pass();
                } catch (PolyglotException e) {
                    Failure why = slot.failure(e, "filter_error");
                    throw new JsFunctionException(why.error(), why.reason());
                }
            }

            @Override
            public void close() {
                slot.release();
            }
        };
    }

    // ---------------------------------------------------------------- validate_doc_update

    @Override
    public ValidateProgram validateProgram(DesignSource source) throws JsFunctionException {
        String rootJson = Json.write(inJavaScript(source.ddoc()));
        Slot slot = borrow("validate\u0000" + source.ddocId() + "\u0000" + rootJson, QueryServerStats.Kind.DDOC_NEW, s -> {
            s.api.invokeMember("init", rootJson);
            s.api.invokeMember("compileValidate", rootJson);
        });
        return new ValidateProgram() {
            @Override
            public JsonNode validate(String newDocJson, String oldDocJson, String userCtxJson, String secObjJson) throws JsFunctionException {
                try {
                    record Verdict(String thrown, String logs) {}
                    Verdict v = slot.call(QueryServerStats.Kind.DDOC_VDU, 1, () -> new Verdict(
                            slot.api.invokeMember("validate", newDocJson, oldDocJson, userCtxJson, secObjJson).asString(),
                            slot.api.invokeMember("logs").asString()));
                    logLines(source.ddocId(), parse(v.logs()));
                    return v.thrown().isEmpty() ? null : parse(v.thrown());
                } catch (PolyglotException e) {
                    Failure why = slot.failure(e, "unknown_error");
                    throw new JsFunctionException(why.error(), why.reason());
                }
            }

            @Override
            public void close() {
                slot.release();
            }
        };
    }

    // ---------------------------------------------------------------- shows, lists, updates

    @Override
    public RenderProgram renderProgram(DesignSource source) throws JsFunctionException {
        String rootJson = Json.write(inJavaScript(source.ddoc()));
        Slot slot = borrow("render\u0000" + source.ddocId() + "\u0000" + rootJson, QueryServerStats.Kind.DDOC_NEW, s -> {
            s.api.invokeMember("init", rootJson);
            s.api.invokeMember("setDesign", rootJson);
        });
        return new RenderProgram() {
            /** One call: its result, or the function's failure as CouchDB's error and reason. */
            private JsonNode run(java.util.function.Supplier<Value> call) throws JsFunctionException {
                record Outcome(String result, String logs) {}
                Outcome o;
                try {
                    o = slot.call(QueryServerStats.Kind.DDOC_OTHER, 1, () -> new Outcome(call.get().asString(), slot.api.invokeMember("logs").asString()));
                } catch (PolyglotException e) {
                    Failure why = slot.failure(e, "render_error");
                    throw new JsFunctionException(why.error(), why.reason());
                }
                logLines(source.ddocId(), parse(o.logs()));
                JsonNode r = parse(o.result());
                JsonNode fail = r.get("fail");
                if (fail != null) throw new JsFunctionException(fail.path(0).asText(), fail.path(1).asText());
                return r.get("ok");
            }

            @Override
            public JsonNode show(String name, String docJson, String reqJson) throws JsFunctionException {
                return run(() -> slot.api.invokeMember("show", name, docJson, reqJson));
            }

            @Override
            public JsonNode update(String name, String docJson, String reqJson) throws JsFunctionException {
                return run(() -> slot.api.invokeMember("update", name, docJson, reqJson));
            }

            @Override
            public JsonNode rewrite(String reqJson) throws JsFunctionException {
                JsonNode r = run(() -> slot.api.invokeMember("rewrite", reqJson));
                return r == null || r.isNull() ? null : r;
            }

            @Override
            public void list(String name, String headJson, String reqJson, ListIO io) throws JsFunctionException {
                // Host callbacks: reading rows and writing output are the host's time, not the function's.
                org.graalvm.polyglot.proxy.ProxyExecutable next = args -> slot.offTheClock(io::nextRow);
                org.graalvm.polyglot.proxy.ProxyExecutable flush = args -> slot.offTheClock(() -> {
                    List<String> chunks = new ArrayList<>();
                    for (JsonNode c : parse(args[0].asString())) chunks.add(c.asText());
                    io.flush(chunks, args[1].isNull() ? null : parse(args[1].asString()));
                    return null;
                });
                run(() -> slot.api.invokeMember("list", name, headJson, reqJson, next, flush));
            }

            @Override
            public void close() {
                slot.release();
            }
        };
    }

    /**
     * Runs typical map and reduce functions over {@code docs} synthetic documents and throws the
     * results away. In interpreter mode a document costs ~60 µs until HotSpot has compiled the
     * interpreter's hot paths (JSON parsing, property reads, calls, {@code emit}), which are the
     * same for every design document; doing that at start, in the background, spares the first
     * index build after a restart. Returns the documents mapped.
     */
    public int warmUp(int docs) {
        return warmUp(docs, () -> { });
    }

    /** {@link #warmUp(int)}, running {@code beforeBatch} before each batch of 500 (to give way to other work). */
    public int warmUp(int docs, Runnable beforeBatch) {
        String ddoc = "_design/\u0000chaise-warmup"; // no user design document can have this id
        List<String> maps = List.of(
                "function (doc) { if (doc.type) emit(doc.type, 1); }",
                "function (doc) { emit([doc.type, doc.n], {name: doc.name, tags: doc.tags.length}); }",
                "(doc) => { for (const t of doc.tags) if (t.startsWith('a')) emit(t.toUpperCase(), doc.n * 2); }");
        int done = 0;
        try (MapProgram m = mapProgram(new MapSource(ddoc, maps, null));
             ReduceProgram r = reduceProgram(new ReduceSource(ddoc, List.of("function (keys, values, rereduce) { return sum(values); }"), null))) {
            while (done < docs) {
                beforeBatch.run();
                List<String> batch = new ArrayList<>(500);
                List<JsonNode> keys = new ArrayList<>(500);
                List<JsonNode> values = new ArrayList<>(500);
                for (int i = 0; i < 500; i++, done++) {
                    batch.add("{\"_id\":\"w" + done + "\",\"_rev\":\"1-0\",\"type\":\"t" + done % 10 + "\",\"n\":" + done
                            + ",\"name\":\"name " + done + "\",\"tags\":[\"a" + done % 7 + "\",\"b\"],\"nested\":{\"x\":" + (done * 0.5) + "}}");
                    keys.add(Json.NODES.arrayNode().add("t").add("w" + done));
                    values.add(Json.NODES.numberNode(done));
                }
                m.mapAll(batch);
                r.reduce(0, keys, values);
            }
        } catch (JsFunctionException e) {
            log.warn("JavaScript warm-up failed: {}", e.getMessage());
        } finally {
            pools.entrySet().removeIf(e -> {
                if (!e.getKey().contains(ddoc)) return false;
                Slot sl;
                while ((sl = e.getValue().poll()) != null) sl.close();
                return true;
            });
        }
        return done;
    }

    /** How many compiled programs have a context pool (tests). */
    int pooledPrograms() {
        return pools.size();
    }

    @Override
    public void close() {
        watchdog.shutdownNow();
        platform.shutdownNow();
        for (BlockingQueue<Slot> pool : pools.values()) {
            Slot s;
            while ((s = pool.poll()) != null) s.close();
        }
        pools.clear();
        engine.close(true);
    }

    private static Source prelude() {
        try (InputStream in = GraalJsEngine.class.getResourceAsStream("prelude.js")) {
            return Source.newBuilder("js", new String(in.readAllBytes(), StandardCharsets.UTF_8), "chaise-prelude.js").build();
        } catch (IOException e) {
            throw new IllegalStateException("the JS prelude is missing from the jar", e);
        }
    }
}
