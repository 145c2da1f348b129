package dev.chaise.server;

import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CouchDB's single-node setup ({@code [couchdb] single_node = true}): the system databases exist
 * from the first start, so users can sign up at once. New databases get CouchDB 3's admin-only
 * {@code _security} from storage, these too.
 */
final class SystemDatabases {
    private static final Logger log = LoggerFactory.getLogger(SystemDatabases.class);
    static final List<String> NAMES = List.of("_users", "_replicator");

    private SystemDatabases() {}

    /** Creates the missing ones; another server creating one at the same moment is fine. @return those created */
    static List<String> ensure(Storage databases) {
        List<String> created = new ArrayList<>();
        for (String name : NAMES) {
            if (databases.exists(name)) continue;
            try {
                databases.create(name);
                created.add(name);
                log.info("created system database {}", name);
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.FILE_EXISTS) throw e;
            }
        }
        return created;
    }
}
