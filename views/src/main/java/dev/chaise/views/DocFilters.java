package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.FilterProgram;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.util.List;

/**
 * Owns design documents' tests on documents, for {@code _changes} and replications: a filter
 * function ({@code filter=ddoc/name}) or a view's map function ({@code filter=_view}).
 */
public final class DocFilters {
    private final JsEngine js;
    private final DesignDocs designs;

    DocFilters(JsEngine js, DesignDocs designs) {
        this.js = js;
        this.designs = designs;
    }

    /** A test on documents; holds a pooled engine context, so close it on the thread that used it. */
    public interface DocFilter extends AutoCloseable {
        boolean test(ObjectNode doc);

        @Override
        void close();
    }

    /**
     * {@code filter=ddoc/name}: the design document's {@code filters[name](doc, req)}. Opens a
     * program on the calling thread.
     */
    public DocFilter filterFunction(Database db, String ddocId, String name, JsonNode req) {
        if (js == null) throw IndexPrograms.noEngine();
        JsonNode ddoc = db.get(ddocId, null, false).body();
        FilterProgram p;
        try {
            p = js.filterProgram(new JsEngine.DesignSource(ddocId, ddoc));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.FUNCTION_COMPILATION_ERROR, e.error(), e.reason());
        }
        try {
            p.compile(name);
        } catch (JsFunctionException e) {
            p.close();
            throw new ViewException(ViewException.Kind.FUNCTION_COMPILATION_ERROR, e.error(), e.reason());
        }
        return new DocFilter() {
            @Override
            public boolean test(ObjectNode doc) {
                try {
                    return p.filter(name, Json.write(doc), req);
                } catch (JsFunctionException e) {
                    throw new ViewException(ViewException.Kind.FILTER_ERROR, e.error(), e.reason());
                }
            }

            @Override
            public void close() {
                p.close();
            }
        };
    }

    /** {@code filter=_view}: documents for which the view's map function emits at least one row. */
    public DocFilter viewFilter(Database db, String ddocId, String viewName) {
        DesignDoc ddoc = designs.get(db, ddocId);
        DesignDoc.View view = ddoc.view(viewName);
        if (view == null) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing_named_view");
        MapProgram p;
        try {
            if (js == null) throw IndexPrograms.noEngine();
            p = js.mapProgram(new JsEngine.MapSource(ddocId, List.of(view.map()), ddoc.lib(), ddoc.language()));
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, e.error(), e.reason());
        }
        return new DocFilter() {
            @Override
            public boolean test(ObjectNode doc) {
                return p.map(doc).getFirst() instanceof MapOutcome.Rows r && !r.rows().isEmpty();
            }

            @Override
            public void close() {
                p.close();
            }
        };
    }
}
