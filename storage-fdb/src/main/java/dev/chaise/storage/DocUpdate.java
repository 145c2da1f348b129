package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/**
 * One document to write.
 *
 * @param baseRev the revision being edited (interactive edits), or null
 * @param body the user's fields only (no {@code _id}, {@code _rev}, ...)
 * @param path for {@code new_edits=false}: the incoming leaf, its deleted flag and ancestors
 * @param stored attachment bodies already stored ({@link Database#storeAttachment}), by name: the
 *     body's {@code _attachments} names each as {@code {"follows": true, content_type}}
 */
public record DocUpdate(String id, RevId baseRev, boolean deleted, ObjectNode body, EditBranch path,
                        Map<String, StoredAttachment> stored) {

    public static DocUpdate edit(String id, RevId baseRev, boolean deleted, ObjectNode body) {
        return new DocUpdate(id, baseRev, deleted, body, null, Map.of());
    }

    public static DocUpdate replicated(String id, EditBranch path, ObjectNode body) {
        return new DocUpdate(id, path.leaf(), path.deleted(), body, path, Map.of());
    }

    public DocUpdate withStored(Map<String, StoredAttachment> s) {
        return new DocUpdate(id, baseRev, deleted, body, path, Map.copyOf(s));
    }

    public DocUpdate withBody(ObjectNode b) {
        return new DocUpdate(id, baseRev, deleted, b, path, stored);
    }
}
