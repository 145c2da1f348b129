package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;

/**
 * A document as validate_doc_update gets it (CouchDB's {@code to_json_obj(Doc, [revs])}):
 * {@code _id}, {@code _rev} and {@code _revisions} of the given branch, the body with attachment
 * stubs, {@code _deleted}.
 */
final class ValidationDoc {
    private ValidationDoc() {}

    /** @param revs whose leaf and revisions the function sees as {@code _rev} and {@code _revisions}; null for none */
    static ObjectNode of(String id, EditBranch revs, boolean deleted, ObjectNode body) {
        ObjectNode d = Json.NODES.objectNode();
        d.put("_id", id);
        if (revs != null) {
            Revisions r = revs.revisions();
            d.put("_rev", revs.leaf().toString());
            ObjectNode o = d.putObject("_revisions");
            o.put("start", r.start());
            r.ids().forEach(o.putArray("ids")::add);
        }
        d.setAll(body);
        if (deleted) d.put("_deleted", true);
        return d;
    }
}
