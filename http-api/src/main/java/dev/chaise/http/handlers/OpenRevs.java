package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.handlers.DocSupport.Meta;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.DocumentStore.StoredDoc;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.EditBranches;
import dev.chaise.storage.rev.RevId;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * CouchDB's {@code open_revs}, shared by {@code GET /{db}/{doc}?open_revs=} and {@code _bulk_get}:
 * the given revisions of one document (or every leaf), each as {@code {"ok": doc}} or
 * {@code {"missing": rev}}. Only leaves keep a body (RFC A/C), so an inner revision is missing.
 */
final class OpenRevs {
    private OpenRevs() {}

    /**
     * @param wanted the revisions asked for, or null for every leaf
     * @param latest answer each revision with every leaf descending from it
     */
    static List<ObjectNode> read(ReadTransaction tx, DbHandle h, String id, List<RevId> wanted, boolean revs, boolean latest) {
        return read(tx, h, id, wanted, revs, latest, -1);
    }

    /** @param attsSince as {@link DocSupport#inlineAttachments}: -1 stubs, 0 every body, N those newer than position N */
    static List<ObjectNode> read(ReadTransaction tx, DbHandle h, String id, List<RevId> wanted, boolean revs, boolean latest, long attsSince) {
        List<ObjectNode> parts = readStubs(tx, h, id, wanted, revs, latest);
        for (ObjectNode p : parts) if (p.has("ok")) DocSupport.inlineAttachments(tx, h, id, (ObjectNode) p.get("ok"), attsSince);
        return parts;
    }

    private static List<ObjectNode> readStubs(ReadTransaction tx, DbHandle h, String id, List<RevId> wanted, boolean revs, boolean latest) {
        List<EditBranch> branches = DocumentStore.branches(tx, h, id);
        List<ObjectNode> out = new ArrayList<>();
        if (wanted == null) {
            for (EditBranch b : EditBranches.leaves(branches)) out.add(part(tx, h, id, b.leaf(), branches, revs, null));
            return out;
        }
        for (RevId r : wanted) {
            if (!latest) {
                out.add(part(tx, h, id, r, branches, revs, r));
                continue;
            }
            // latest: every leaf descending from the revision (more than one where it branched).
            Set<RevId> leaves = new LinkedHashSet<>();
            for (EditBranch b : EditBranches.leaves(branches)) if (b.contains(r)) leaves.add(b.leaf());
            if (leaves.isEmpty()) out.add(Json.NODES.objectNode().put("missing", r.toString()));
            for (RevId leaf : leaves) out.add(part(tx, h, id, leaf, branches, revs, r));
        }
        return out;
    }

    private static ObjectNode part(ReadTransaction tx, DbHandle h, String id, RevId rev, List<EditBranch> branches, boolean revs, RevId asked) {
        try {
            StoredDoc d = DocumentStore.get(tx, h, id, rev, false);
            StoredDoc withBranches = new StoredDoc(d.id(), d.rev(), d.deleted(), d.body(), branches, d.seq());
            return Json.NODES.objectNode().set("ok", DocSupport.render(withBranches, new Meta(revs, false, false, false, false)));
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            return Json.NODES.objectNode().put("missing", (asked != null ? asked : rev).toString());
        }
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
