package dev.chaise.storage;

/**
 * Document ids of a partitioned database ({@code couch_partition}): {@code partition:docid},
 * split at the first colon. Design and {@code _local} documents belong to no partition.
 */
public final class Partitions {
    private Partitions() {}

    /** The partition of {@code docId}, or null for an id with no colon or one that starts with {@code _} (design, local). */
    public static String of(String docId) {
        if (docId.startsWith("_")) return null;
        int colon = docId.indexOf(':');
        return colon < 0 ? null : docId.substring(0, colon);
    }

    /**
     * {@code couch_db:validate_docid} in a partitioned database: the id's own rules first, then a
     * partition and a document id after it, each valid.
     */
    public static void validateDocId(String docId) {
        DocumentJson.validateId(docId);
        if (docId.startsWith(DocumentJson.DESIGN_PREFIX) || docId.startsWith(DocumentJson.LOCAL_PREFIX)) return;
        int colon = docId.indexOf(':');
        if (colon < 0) throw notPartitioned();
        validatePartition(docId.substring(0, colon));
        DocumentJson.validateId(docId.substring(colon + 1));
    }

    /**
     * What routing a document needs ({@code couch_partition:hash}): an id outside {@code _design/}
     * and {@code _local/} without a partition is refused, as a generated id or a purge's id is.
     */
    public static void requirePartition(String docId) {
        if (!docId.startsWith("_") && docId.indexOf(':') < 0) throw notPartitioned();
    }

    /** A partition name, as the path {@code /{db}/_partition/{p}} or a document id gives it. */
    public static void validatePartition(String partition) {
        if (partition.isEmpty()) throw illegal("Partition must not be empty");
        if (partition.startsWith("_")) throw illegal("Partition must not start with an underscore");
        if (!DocumentJson.isUtf8(partition)) throw illegal("Partition must be valid UTF-8");
        if (partition.indexOf(':') >= 0) throw illegal("Partition must not contain a colon");
    }

    /** The first id of {@code partition} and the first id after it ({@code couch_partition:start_key/end_key}). */
    public static String startId(String partition) {
        return partition + ":";
    }

    public static String endId(String partition) {
        return partition + ";";
    }

    private static StorageException notPartitioned() {
        return new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Doc id must be of form partition:id");
    }

    private static StorageException illegal(String reason) {
        return new StorageException(StorageException.Kind.ILLEGAL_PARTITION, reason);
    }
}
