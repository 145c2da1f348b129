package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.AccessIndex;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentJson.Meta;
import dev.chaise.storage.RevId;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * CouchDB's {@code open_revs} as JSON, shared by {@code GET /{db}/{doc}?open_revs=} and
 * {@code _bulk_get}: the given revisions of one document (or every leaf), each as
 * {@code {"ok": doc}} or {@code {"missing": rev}} ({@link DbReader#openRevs}), each document as
 * the database's policy lets the reader see it.
 */
final class OpenRevs {
    private OpenRevs() {}

    /**
     * @param db the database as opened for the reader: each revision is rendered as they may see it
     * @param wanted the revisions asked for, or null for every leaf
     * @param latest answer each revision with every leaf descending from it
     * @param attsSince as {@link DbReader#inlineAttachments}: -1 stubs, 0 every body, N those newer than position N
     * @param encodingInfo stubs show how their bodies are stored ({@code att_encoding_info}, multipart answers)
     * @param refusalsAsRows a revision the reader may not see becomes {@code {"error": {id, rev, error, reason}}}
     *     ({@code _bulk_get}), rather than failing the read
     */
    static List<ObjectNode> read(SecuredDb db, DbReader r, String id, List<RevId> wanted, boolean revs, boolean latest, long attsSince,
                                 boolean encodingInfo, boolean refusalsAsRows) {
        List<ObjectNode> out = new ArrayList<>();
        Meta meta = new Meta(revs, false, false, false, false);
        // In an access database, a revision this user may not read is missing (asked for by name)
        // or left out; a document they lost answers its deletion (AccessIndex.revokedRev).
        RevId lost = db.limitedByAccess() && wanted != null ? db.lostAt(r, id) : null;
        RevId revoked = lost == null ? null : AccessIndex.revokedRev(id, lost);
        for (DbReader.OpenRev o : r.openRevs(id, wanted, latest)) {
            if (o.doc() == null && o.rev().equals(revoked)) {
                ObjectNode t = AccessIndex.revokedTombstone(id, lost, r.branches(id));
                if (!revs) t.remove("_revisions");
                out.add(Json.NODES.objectNode().set("ok", t));
                continue;
            }
            if (o.doc() == null || !db.mayRead(o.doc().body())) {
                if (wanted != null) out.add(Json.NODES.objectNode().put("missing", o.rev().toString()));
                continue;
            }
            ObjectNode doc;
            try {
                doc = db.render(o.doc(), meta);
            } catch (StorageException e) {
                if (!refusalsAsRows) throw e;
                ObjectNode err = Json.NODES.objectNode();
                err.putObject("error").put("id", id).put("rev", o.rev().toString()).put("error", e.error()).put("reason", e.reason());
                out.add(err);
                continue;
            }
            if (encodingInfo) DocumentJson.showEncoding(o.doc(), doc);
            r.inlineAttachments(o.doc(), doc, attsSince);
            out.add(Json.NODES.objectNode().set("ok", doc));
        }
        return out;
    }

    /** As mochiweb's {@code accepts_content_type}: no Accept header accepts anything; any type and the major type wildcard match. */
    static boolean accepts(String accept, String type) {
        if (accept == null || accept.isBlank()) return true;
        String major = type.substring(0, type.indexOf('/'));
        for (String part : accept.split(",")) {
            String t = part.split(";")[0].strip().toLowerCase(Locale.ROOT);
            if (t.equals(type) || t.equals(major + "/*") || t.equals("*/*")) return true;
        }
        return false;
    }
}
