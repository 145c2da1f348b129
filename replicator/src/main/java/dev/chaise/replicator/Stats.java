package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.concurrent.atomic.AtomicLong;

/** A replication's counters ({@code couch_replicator_stats}), carried across its runs. */
final class Stats {
    final AtomicLong missingChecked = new AtomicLong();
    final AtomicLong missingFound = new AtomicLong();
    final AtomicLong docsRead = new AtomicLong();
    final AtomicLong docsWritten = new AtomicLong();
    final AtomicLong docWriteFailures = new AtomicLong();
    final AtomicLong bulkGetDocs = new AtomicLong();
    final AtomicLong bulkGetAttempts = new AtomicLong();

    /** The larger of each counter (couch_replicator_stats:max_stats), from a checkpoint's history entry or the job. */
    void atLeast(JsonNode j) {
        if (j == null || !j.isObject()) return;
        max(missingChecked, j, "missing_checked", "revisions_checked");
        max(missingFound, j, "missing_found", "missing_revisions_found");
        max(docsRead, j, "docs_read", null);
        max(docsWritten, j, "docs_written", null);
        max(docWriteFailures, j, "doc_write_failures", null);
        max(bulkGetDocs, j, "bulk_get_docs", null);
        max(bulkGetAttempts, j, "bulk_get_attempts", null);
    }

    private static void max(AtomicLong c, JsonNode j, String name, String alt) {
        JsonNode v = j.has(name) ? j.get(name) : alt == null ? null : j.get(alt);
        if (v != null && v.canConvertToLong()) c.accumulateAndGet(v.longValue(), Math::max);
    }

    /** As _scheduler and _active_tasks name them. */
    ObjectNode toJson() {
        ObjectNode o = Json.NODES.objectNode();
        o.put("revisions_checked", missingChecked.get());
        o.put("missing_revisions_found", missingFound.get());
        o.put("docs_read", docsRead.get());
        o.put("docs_written", docsWritten.get());
        o.put("doc_write_failures", docWriteFailures.get());
        o.put("bulk_get_docs", bulkGetDocs.get());
        o.put("bulk_get_attempts", bulkGetAttempts.get());
        return o;
    }
}
