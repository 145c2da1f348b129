package dev.chaise.storage;

import java.util.List;

/** What a purge removed from one document: the leaves it named that were there, in revision order. */
public record Purged(String id, List<RevId> revs) {
    public Purged {
        revs = List.copyOf(revs);
    }
}
