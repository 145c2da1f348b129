package dev.chaise.views.search;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.index.IndexCommit;
import org.apache.lucene.index.IndexDeletionPolicy;

/**
 * Keeps a superseded commit's files for a while before deleting them. On a local disk a reader
 * keeps reading a deleted file it has open; in the KV a deleted file's blocks are gone, so a
 * search that opened the previous commit (here, or on another server) would fail mid-way when
 * a build's merge drops its segments. Searches reopen their reader on every query, so a commit
 * only needs to outlive the longest search.
 */
final class KeepRecentCommits extends IndexDeletionPolicy {
    private final long keepMillis;
    private final Map<Long, Long> supersededAt = new HashMap<>();

    KeepRecentCommits(long keepMillis) {
        this.keepMillis = keepMillis;
    }

    @Override
    public void onInit(List<? extends IndexCommit> commits) {
        onCommit(commits);
    }

    @Override
    public void onCommit(List<? extends IndexCommit> commits) {
        if (commits.isEmpty()) return; // a new index
        long now = System.currentTimeMillis();
        IndexCommit last = commits.getLast();
        for (IndexCommit c : commits) {
            if (c == last) continue;
            long at = supersededAt.computeIfAbsent(c.getGeneration(), g -> now);
            if (now - at >= keepMillis) {
                c.delete();
                supersededAt.remove(c.getGeneration());
            }
        }
    }
}
