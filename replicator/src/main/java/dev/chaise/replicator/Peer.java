package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/**
 * One side of a replication, as the replicator talks to it ({@code couch_replicator_api_wrap}):
 * a database of this server through storage ({@link LocalPeer}) or a remote one over HTTP
 * ({@link HttpPeer}). Documents travel as CouchDB's JSON with {@code _revisions}; attachment
 * bodies travel as streams, never whole.
 */
interface Peer extends AutoCloseable {

    /** One change: a document's leaf revisions at its last sequence. */
    record Change(JsonNode seq, String id, List<String> revs, boolean deleted) {}

    /** What the replicator reads from {@code _changes}. */
    record ChangesQuery(JsonNode since, boolean continuous, boolean winningOnly, List<String> docIds, JsonNode selector,
                        String filter, ObjectNode queryParams, long timeoutMs) {}

    /** Receives changes in order; the feed's {@code last_seq} comes last. */
    interface ChangesSink {
        void change(Change c) throws InterruptedException;

        void lastSeq(JsonNode seq) throws InterruptedException;
    }

    /** A revision the target lacks, and the ones it has that may share its attachments. */
    record Wanted(String id, String rev, List<String> possibleAncestors) {}

    /** An attachment body to copy: valid while the document's sink runs. */
    /** @param length in bytes, or -1 if the source did not say */
    record AttachmentBody(String name, long length, java.util.function.Supplier<InputStream> opener) {
        InputStream open() {
            return opener.get();
        }
    }

    /** A revision read from the source: its JSON (with {@code _revisions}) and the bodies its target lacks. */
    record Fetched(ObjectNode doc, List<AttachmentBody> attachments) {}

    interface FetchSink {
        void accept(Fetched doc);
    }

    /** One document the target refused, as {@code _bulk_docs} reports it. */
    record WriteError(String id, String rev, String error, String reason) {}

    /** A stripped URL or a local database name. */
    String uri();

    /** Database info: {@code update_seq}, {@code instance_start_time}; throws db_not_found, unauthorized, ... */
    ObjectNode info();

    /**
     * Who the replication is on this peer (the name its requests are signed in as), or null:
     * in a per-document access database, its checkpoints carry that name in {@code _access}.
     */
    String user();

    /** Creates the database ({@code create_target}); an existing one is fine. */
    void create(ObjectNode params);

    /** A {@code _local} document, or null. */
    ObjectNode getLocal(String id);

    /** Writes a {@code _local} document over whatever is there. */
    void putLocal(String id, ObjectNode body);

    /** A document's winning revision's body, or null if missing. */
    ObjectNode getDoc(String id);

    /** Streams changes after {@code since} until the feed ends (a normal feed at its end, a live one at its timeout). */
    void changes(ChangesQuery q, ChangesSink sink) throws InterruptedException;

    /** Changes after {@code since}, or null if the peer cannot say. */
    Long pending(JsonNode since);

    /** {@code _revs_diff}: by id, the missing revisions and possible ancestors. */
    Map<String, RevsDiffEntry> revsDiff(Map<String, List<String>> revs);

    record RevsDiffEntry(List<String> missing, List<String> possibleAncestors) {}

    /**
     * Reads the wanted revisions (their latest leaves), each with {@code _revisions} and the
     * attachment bodies newer than its possible ancestors. Documents reach {@code sink} one at a time.
     *
     * @param bulkGet whether to try {@code _bulk_get} first (remote sources)
     * @return how many documents {@code _bulk_get} answered (for the {@code bulk_get_docs} counter), or 0
     */
    int fetch(List<Wanted> wanted, boolean bulkGet, FetchSink sink);

    /** Writes documents without attachment bodies with {@code new_edits: false}; returns the refused ones. */
    List<WriteError> writeDocs(List<ObjectNode> docs);

    /** Writes one document with its attachment bodies, streamed; returns its error or null. */
    WriteError writeDoc(Fetched doc);

    /** {@code _ensure_full_commit}: the instance_start_time. */
    String ensureFullCommit();

    @Override
    void close();
}
