package dev.chaise.views;

import dev.chaise.kv.KvException;
import dev.chaise.storage.Database;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;

/** What the model tests' writers share: a document's current revision, and an operator's retry. */
public final class DocOps {
    private DocOps() {}

    /** The winning revision of {@code id}, or null if it has none. */
    public static RevId current(Database db, String id) {
        try {
            return db.get(id, null, false).rev();
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            return null;
        }
    }

    /** An operator's retry around writes whose 1021 surfaced, or a create that did commit. */
    public static void retry(Runnable r) {
        for (int attempt = 0; ; attempt++) {
            try {
                r.run();
                return;
            } catch (KvException e) {
                if (attempt > 50) throw e;
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.FILE_EXISTS || attempt == 0) throw e;
                return;
            }
        }
    }
}
