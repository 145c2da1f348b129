package dev.chaise.views;

import dev.chaise.storage.StorageException;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.Reductions;
import dev.chaise.views.index.TreeReducer;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapProgram;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.ReduceProgram;
import dev.chaise.views.mango.MangoMapProgram;
import dev.chaise.views.query.BuiltinReducers;
import dev.chaise.views.query.Views;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Owns the programs an index runs: a design document's map program (JavaScript in the engine,
 * or Mango's in Java, one per signature), its reduce programs, and the reducers its trees use.
 * Compile errors become {@link ViewException}s; without an engine, JavaScript is 501.
 */
public final class IndexPrograms {
    private final JsEngine js;
    /** Mango's map programs are stateless: one per signature serves every thread and every write. */
    private final ConcurrentHashMap<String, MapProgram> mangoPrograms = new ConcurrentHashMap<>();

    /** @param js the engine, or null: only Mango's indexes can be built */
    private final dev.chaise.stats.Counter emits;

    public IndexPrograms(JsEngine js, dev.chaise.stats.Stats stats) {
        this.js = js;
        this.emits = stats.counter("couchdb.mrview.emits", "number of rows map functions emitted, for index builds and interactive indexes");
    }

    /** False for a JavaScript design document when there is no engine: interactive writes then leave it alone. */
    boolean canMap(DesignDoc ddoc) {
        return js != null || DesignDoc.QUERY.equals(ddoc.language());
    }

    /** The design document's map functions as one program; close it on the thread that used it. */
    MapProgram mapProgram(DesignDoc ddoc) {
        return new Emitting(program(ddoc), emits);
    }

    private MapProgram program(DesignDoc ddoc) {
        if (DesignDoc.QUERY.equals(ddoc.language())) return mangoProgram(ddoc); // Mango's JSON indexes, in Java
        if (js == null) throw noEngine();
        if (!js.speaks(ddoc.language())) {
            throw new ViewException(ViewException.Kind.INVALID_DESIGN_DOC, "unknown_query_language", ddoc.language());
        }
        try {
            return js.mapProgram(new JsEngine.MapSource(ddoc.id(), ddoc.maps(), ddoc.lib(), ddoc.language()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
    }

    private MapProgram mangoProgram(DesignDoc ddoc) {
        if (mangoPrograms.size() > 1000) mangoPrograms.clear();
        return mangoPrograms.computeIfAbsent(ddoc.signature(), k -> new MangoMapProgram(ddoc));
    }

    /** One view's JavaScript reduce; close it on the thread that used it. */
    ReduceProgram reduceProgram(DesignDoc ddoc, DesignDoc.View view) {
        if (js == null) throw noEngine();
        try {
            return js.reduceProgram(new JsEngine.ReduceSource(ddoc.id(), List.of(view.reduce()), ddoc.lib(), ddoc.language()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
    }

    /**
     * The reduce function of each view of {@code ddoc}, for the index's trees: built-ins at once,
     * JavaScript programs when first asked for, on the calling thread, closed with the result.
     */
    Reductions.Opened reducers(DesignDoc ddoc) {
        return new Reductions.Opened() {
            final ReduceProgram[] programs = new ReduceProgram[ddoc.views().size()];

            @Override
            public TreeReducer<?> of(int viewId) {
                DesignDoc.View v = ddoc.views().get(viewId);
                if (v.reduce() == null) return null;
                if (v.builtinReduce()) return BuiltinReducers.of(v.reduce());
                if (programs[viewId] == null) programs[viewId] = reduceProgram(ddoc, v);
                return Views.jsReducer(programs[viewId], 0);
            }

            @Override
            public void close() {
                for (ReduceProgram p : programs) if (p != null) p.close();
            }
        };
    }

    static StorageException noEngine() {
        return new StorageException(StorageException.Kind.NOT_IMPLEMENTED, "No JavaScript engine is configured.");
    }

    /** A map program whose emitted rows are counted: CouchDB's {@code mrview.emits}. */
    private record Emitting(MapProgram program, dev.chaise.stats.Counter emits) implements MapProgram {
        @Override
        public List<MapOutcome> map(String docJson) {
            return counted(program.map(docJson));
        }

        @Override
        public List<MapOutcome> map(com.fasterxml.jackson.databind.JsonNode doc) {
            return counted(program.map(doc));
        }

        @Override
        public List<List<MapOutcome>> mapAll(List<String> docsJson) {
            List<List<MapOutcome>> out = program.mapAll(docsJson);
            out.forEach(this::counted);
            return out;
        }

        @Override
        public List<List<MapOutcome>> mapAllDocs(List<? extends com.fasterxml.jackson.databind.JsonNode> docs) {
            List<List<MapOutcome>> out = program.mapAllDocs(docs);
            out.forEach(this::counted);
            return out;
        }

        private List<MapOutcome> counted(List<MapOutcome> outcomes) {
            if (outcomes == null) return null;
            long n = 0;
            for (MapOutcome o : outcomes) if (o instanceof MapOutcome.Rows r) n += r.rows().size();
            emits.add(n);
            return outcomes;
        }

        @Override
        public void close() {
            program.close();
        }
    }
}
