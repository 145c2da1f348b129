package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Owns naming a replication on this server: its full id ({@link ReplicationId}), for which a
 * user filter's source is fetched from the replication's source, as CouchDB fetches it.
 */
final class ReplicationIds {
    private final String serverUuid;
    private final Peers peers;

    ReplicationIds(String serverUuid, Peers peers) {
        this.serverUuid = serverUuid;
        this.peers = peers;
    }

    /** The id of a replication, its user filter's code fetched from the source (404 if it cannot be). */
    String fullId(ReplicationSpec spec) {
        String code = null;
        if (spec.userFilter()) code = filterCode(spec);
        String[] id = ReplicationId.compute(serverUuid, spec, code);
        return id[0] + id[1];
    }

    /** The id without its {@code +continuous}/{@code +create_target} options: the checkpoints' name. */
    static String base(String fullId) {
        int plus = fullId.indexOf('+');
        return plus < 0 ? fullId : fullId.substring(0, plus);
    }

    /** couch_replicator_filters:fetch: the filter's source from the source's design document. */
    private String filterCode(ReplicationSpec spec) {
        String f = spec.filter();
        int slash = f.indexOf('/');
        String ddoc = f.substring(0, slash);
        String name = f.substring(slash + 1);
        try (Peer src = peers.peer(spec.source(), spec)) {
            ObjectNode doc = src.getDoc("_design/" + ddoc);
            if (doc == null) {
                throw new ReplicationException(404, "not_found", "Couldn't open document `_design/" + ddoc + "` from source database `" + src.uri() + "`: not_found");
            }
            JsonNode code = doc.path("filters").get(name);
            if (code == null || !code.isTextual()) {
                throw new ReplicationException(404, "not_found", "Couldn't parse filter code from document " + ddoc + " on `" + src.uri() + "`  Error: {not_found,missing}");
            }
            return code.textValue();
        } catch (ReplicationException e) {
            if (e.status() == 404 && e.error().equals("not_found")) throw e;
            throw new ReplicationException(404, "not_found", "Could not open source database `" + spec.source().display() + "`: " + e.summary());
        }
    }
}
