package dev.chaise.archfixture.door;

import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import java.util.List;

/** A class that writes past the door, for {@code DatabaseDoorTest} to catch. */
public final class Bypass {
    private Bypass() {}

    static void write(Database db, DocUpdate u) {
        db.updateUnchecked(List.of(u), true);
    }
}
