package dev.chaise.storage;

import dev.chaise.kv.StoreTimer;

/**
 * What the document layer counts, above the KV seam's own waits and counts ({@link StoreTimer}),
 * as the Record Layer's {@code FDBStoreTimer} counts record loads and saves beside FDB's waits.
 * Each name is a metric.
 */
public enum StorageCounts implements StoreTimer.Count {
    /** Document revisions read (a body, or the winner's metadata). */
    DOCUMENTS_READ,
    /** Documents written: edits, replicated revisions and deletions that committed. */
    DOCUMENTS_WRITTEN,
    /** Documents refused with 409 conflict. */
    DOCUMENT_CONFLICTS,
    /** Attempts of a document write transaction beyond the first (1020, 1007, 1021 retried). */
    WRITE_ATTEMPTS_RETRIED,
    /** Rows read by cursors, skipped ones included. */
    CURSOR_ROWS_SCANNED,
    /** Transactions cursors ran. */
    CURSOR_TRANSACTIONS,
    /** _local documents read and written. */
    LOCAL_DOCUMENTS_READ,
    LOCAL_DOCUMENTS_WRITTEN,
    /** Attachment bytes stored and read. */
    ATTACHMENT_BYTES_WRITTEN,
    ATTACHMENT_BYTES_READ
}
