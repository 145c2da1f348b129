package dev.chaise.storage;

import java.util.List;

/** CouchDB's {@code _revisions} object: {@code start} is the newest position, {@code ids} newest first. */
public record Revisions(long start, List<String> ids) {
    public Revisions {
        ids = List.copyOf(ids);
    }
}
