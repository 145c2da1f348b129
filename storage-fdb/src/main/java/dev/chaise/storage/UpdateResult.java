package dev.chaise.storage;

/** A document's outcome in a write: its new revision, or an error. */
public record UpdateResult(String id, RevId rev, StorageException error) {
    public boolean ok() {
        return error == null;
    }
}
