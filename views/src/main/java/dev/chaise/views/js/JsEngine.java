package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The in-process JavaScript engine that runs design-document functions. One per server; it hands
 * out programs bound to the calling thread (contexts are pooled per thread), so a program must be
 * used and closed on the thread that got it.
 *
 * <p>Functions are sandboxed: no Java classes, no I/O, no network, a per-call time limit and
 * bounded memory. A function that throws or times out fails that call only; one that does not
 * compile fails the program with {@code compilation_error}.
 */
public interface JsEngine extends AutoCloseable {

    /** The map functions of one design document, in view order. */
    MapProgram mapProgram(MapSource source) throws JsFunctionException;

    /**
     * Nouveau's index functions of one design document, in the order given: each call of
     * {@code index(type, name, value, options)} comes back as an emit whose key is
     * {@code {"t": type, "n": name, "v": value, "s": store}}; a function that throws fails that
     * document for that index.
     */
    default MapProgram indexProgram(MapSource source) throws JsFunctionException {
        throw new JsFunctionException("compilation_error", "this engine does not run Nouveau index functions");
    }

    /** A design document's JavaScript reduce functions (built-ins like {@code _sum} never get here). */
    ReduceProgram reduceProgram(ReduceSource source) throws JsFunctionException;

    /** A design document's {@code filters} functions, for {@code _changes?filter=ddoc/name}. */
    FilterProgram filterProgram(DesignSource source) throws JsFunctionException;

    /**
     * A design document's {@code validate_doc_update} function.
     *
     * @throws JsFunctionException {@code compilation_error} if it does not compile
     */
    ValidateProgram validateProgram(DesignSource source) throws JsFunctionException;

    /** A design document's {@code shows}, {@code lists} and {@code updates} functions. */
    RenderProgram renderProgram(DesignSource source) throws JsFunctionException;

    /**
     * Compiles one function without keeping it, as couchjs' {@code add_fun} does when CouchDB
     * checks a design document's views before saving it.
     *
     * @throws JsFunctionException {@code compilation_error} with the engine's message if it does not compile
     */
    void checkCompiles(String source) throws JsFunctionException;

    String JAVASCRIPT = "javascript";

    /**
     * Whether design documents of {@code language} run here: {@code javascript}, and
     * {@code coffeescript} when the build bundled its compiler (each function compiled to
     * JavaScript first, as couchjs' util.js does). A design document's {@code language} decides;
     * {@link DesignSource}s say theirs in the document.
     */
    boolean speaks(String language);

    /**
     * {@code [query_server_config] reduce_limit} (on unless {@code false}): a JavaScript reduce
     * whose output is over 4096 bytes and more than half its input fails with
     * {@code reduce_overflow_error}, as CouchDB's views.js checks it.
     */
    void reduceLimit(boolean on);

    /** Which engine this is, as {@code GET /_node/_local/_versions} shows it ({@code javascript_engine}). */
    About about();

    /** @param version null when the engine has none to tell */
    record About(String name, String version) {}

    /** Counts calls into the engine as CouchDB's query server metrics, in the server's registry from now on. */
    default void countInto(dev.chaise.stats.Stats stats) {}

    @Override
    void close();

    /**
     * Whether a failure's error word means the engine stopped the call ({@code timeout},
     * {@code memory_limit}) rather than the function failing on its own: a call made inside a
     * write's transaction must then fail the request, since the transaction has run as long as
     * the call and a retry would only run it again.
     */
    static boolean stoppedByEngine(String error) {
        return error.equals("timeout") || error.equals("memory_limit");
    }

    /**
     * @param ddocId e.g. {@code _design/foo}, for messages
     * @param maps the {@code map} source of each view, in the order results are returned
     * @param lib the design document's {@code views.lib} object (CommonJS modules for
     *     {@code require('views/lib/...')}), or null
     */
    record MapSource(String ddocId, List<String> maps, JsonNode lib, String language) {
        public MapSource(String ddocId, List<String> maps, JsonNode lib) {
            this(ddocId, maps, lib, JAVASCRIPT);
        }
    }

    /** @param reduces the {@code reduce} source of each JS-reduced view */
    record ReduceSource(String ddocId, List<String> reduces, JsonNode lib, String language) {
        public ReduceSource(String ddocId, List<String> reduces, JsonNode lib) {
            this(ddocId, reduces, lib, JAVASCRIPT);
        }
    }

    /** The whole design document: filters can {@code require} any path in it. */
    record DesignSource(String ddocId, JsonNode ddoc) {}
}
