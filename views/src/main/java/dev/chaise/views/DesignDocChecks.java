package dev.chaise.views;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.DocumentValidator;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.ViewException;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.validate.ValidateDocUpdate;
import java.util.List;

/**
 * Owns what a database's design documents say about writes: the checks a design document passes
 * before it is saved, and the validate_doc_update functions every other write passes. Both run
 * design-document JavaScript on behalf of a writer, so they share the engine and sit together.
 */
public final class DesignDocChecks {
    private final JsEngine js;
    private final ValidateDocUpdate validation;

    /**
     * @param js the engine, or null: no design document is compiled, and no function validates
     * @param stats where validations are counted
     */
    public DesignDocChecks(JsEngine js, dev.chaise.stats.Stats stats) {
        this.js = js;
        this.validation = new ValidateDocUpdate(js, stats);
    }

    /** CouchDB's validate_doc_update for a write made by {@code userName} (null: anonymous) with {@code roles}. */
    public DocumentValidator validator(String userName, List<String> roles) {
        return validation.forUser(userName, roles);
    }

    /**
     * What CouchDB checks of a design document before saving it ({@code couch_mrview:validate}):
     * its index definitions parse (400 {@code invalid_design_doc}), and, for JavaScript, every
     * view's map function and JavaScript reduce compiles (400 {@code compilation_error} with the
     * engine's message). Filters and {@code validate_doc_update} are compiled when they are used,
     * as in CouchDB. Another language is saved unchecked, as CouchDB saves it.
     */
    public void checkDesign(String ddocId, JsonNode body) {
        DesignDoc d = DesignDoc.parse(ddocId, body);
        if (js == null || !"javascript".equals(d.language())) return;
        for (DesignDoc.View v : d.views()) {
            checkCompiles("map", v.name(), v.map());
            if (v.reduce() != null && !v.builtinReduce()) checkCompiles("reduce", v.name(), v.reduce());
        }
    }

    private void checkCompiles(String type, String view, String source) {
        try {
            js.checkCompiles(source);
        } catch (JsFunctionException e) {
            throw new ViewException(ViewException.Kind.COMPILATION_ERROR, "compilation_error",
                    "Compilation of the " + type + " function in the '" + view + "' view failed: " + e.reason());
        }
    }
}
