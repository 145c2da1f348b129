package dev.chaise.views;

import dev.chaise.storage.Sequence;

/** {@code GET /{db}/_design/{ddoc}/_info}'s view_index. */
public record IndexInfo(String signature, String language, long sizeActive, long sizeExternal, Sequence updateSeq,
                        boolean updaterRunning, Sequence dbSeq) {}
