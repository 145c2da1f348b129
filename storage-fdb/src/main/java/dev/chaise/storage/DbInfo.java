package dev.chaise.storage;

/** What {@code GET /{db}} reports (RFC B), read without conflicting with writers. */
public record DbInfo(String name, String uuid, long docCount, long docDelCount, Sequence updateSeq, long sizeExternal, long sizeActive) {}
