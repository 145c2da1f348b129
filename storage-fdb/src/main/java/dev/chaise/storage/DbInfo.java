package dev.chaise.storage;

/** What {@code GET /{db}} reports (RFC B), read without conflicting with writers. */
/**
 * @param purgeSeq the last purge's sequence, or null if nothing was purged
 * @param partitioned whether the database was created partitioned ({@code props.partitioned})
 * @param access a per-document access database ({@code props.access})
 */
public record DbInfo(String name, String uuid, long docCount, long docDelCount, Sequence updateSeq, long sizeExternal, long sizeActive,
                     Sequence purgeSeq, boolean partitioned, boolean access) {}
