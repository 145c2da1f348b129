package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * A document as read: one revision, its body, on request every edit branch (winner last), and
 * the document's sequence when the revision read is the winner (else null).
 */
public record StoredDoc(String id, RevId rev, boolean deleted, ObjectNode body, List<EditBranch> branches, Sequence seq) {

    /** The same revision with the document's branches, read separately. */
    public StoredDoc withBranches(List<EditBranch> b) {
        return new StoredDoc(id, rev, deleted, body, b, seq);
    }

    /** {@code _conflicts}: the other live leaves, for a document read with its branches (else none known). */
    public List<RevId> conflicts() {
        return branches == null ? List.of() : EditBranches.conflicts(branches);
    }
}
