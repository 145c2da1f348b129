package dev.chaise.storage;

import java.util.List;

/** One document of a purge: the leaf revisions to remove (others named are ignored, as CouchDB ignores them). */
public record PurgeRequest(String id, List<RevId> revs) {
    public PurgeRequest {
        revs = List.copyOf(revs);
    }
}
