package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.js.RenderProgram;

/**
 * Owns running design documents' {@code shows}, {@code lists} and {@code updates} functions, as
 * CouchDB's query server runs them: each call borrows the design document's compiled program from
 * the engine's pool (timeouts, sandbox and memory limit as for any function) and gives it back.
 * Reading the document a function is given and writing the one an update returns are the caller's,
 * through storage's door; this class only runs the JavaScript.
 */
public final class DesignFunctions {
    private final JsEngine js;

    DesignFunctions(JsEngine js) {
        this.js = js;
    }

    /** A design document as its functions see it ({@code this}): {@code _id}, {@code _rev} and the body. */
    public record Design(String id, String rev, ObjectNode doc) {
        /**
         * CouchDB's {@code couch_util:get_nested_json_value(DDoc, [group, name])}: 404
         * {@code missing json key: ...} unless the design document has {@code group.name}.
         */
        public void requireFunction(String group, String name) {
            JsonNode g = doc.get(group);
            if (g == null || g.isNull()) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing json key: " + group);
            if (!g.isObject()) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "json_mismatch");
            JsonNode f = g.get(name);
            if (f == null || f.isNull()) throw new ViewException(ViewException.Kind.NOT_FOUND, "not_found", "missing json key: " + name);
        }
    }

    /** What an update function returned: the document to write (null for none) and the response object. */
    public record Updated(ObjectNode doc, JsonNode response) {}

    /** The design document {@code ddocId}: 404 {@code missing}/{@code deleted} as for any document. */
    public Design design(Database db, String ddocId) {
        StoredDoc d = db.get(ddocId, null, false);
        return new Design(d.id(), d.rev().toString(), DocumentJson.render(d));
    }

    /** {@code shows[name](doc, req)}: the response object. */
    public JsonNode show(Design d, String name, JsonNode doc, JsonNode req) {
        d.requireFunction("shows", name);
        try (RenderProgram p = open(d)) {
            return p.show(name, json(doc), Json.write(req));
        } catch (JsFunctionException e) {
            throw failed(e);
        }
    }

    /** {@code updates[name](doc, req)}. */
    public Updated update(Design d, String name, JsonNode doc, JsonNode req) {
        d.requireFunction("updates", name);
        JsonNode r;
        try (RenderProgram p = open(d)) {
            r = p.update(name, json(doc), Json.write(req));
        } catch (JsFunctionException e) {
            throw failed(e);
        }
        // CouchDB writes only an object; anything else is "no document".
        return new Updated(r.get(0) instanceof ObjectNode o ? o : null, r.get(1));
    }

    /** The design document's {@code rewrites} function on {@code req}: the rewrite it gives, or null for none. */
    public JsonNode rewrite(Design d, JsonNode req) {
        try (RenderProgram p = open(d)) {
            return p.rewrite(Json.write(req));
        } catch (JsFunctionException e) {
            throw failed(e);
        }
    }

    /**
     * {@code lists[name](head, req)}, run on the calling thread to its end; rows are pulled from
     * {@code io} and output handed to it as the function goes.
     */
    public void list(Design d, String name, JsonNode head, JsonNode req, RenderProgram.ListIO io) {
        d.requireFunction("lists", name);
        try (RenderProgram p = open(d)) {
            p.list(name, Json.write(head), Json.write(req), io);
        } catch (JsFunctionException e) {
            throw failed(e);
        }
    }

    private RenderProgram open(Design d) throws JsFunctionException {
        if (js == null) throw IndexPrograms.noEngine();
        return js.renderProgram(new JsEngine.DesignSource(d.id(), d.doc()));
    }

    private static String json(JsonNode doc) {
        return doc == null ? "null" : Json.write(doc);
    }

    /** The engine stopping a call is an os_process_error, with CouchDB's reason for its query server timing out. */
    private static ViewException failed(JsFunctionException e) {
        if (JsEngine.stoppedByEngine(e.error())) {
            return ViewException.engineStopped(e.error(), e.reason());
        }
        return new ViewException(ViewException.Kind.FUNCTION_ERROR, e.error(), e.reason());
    }
}
