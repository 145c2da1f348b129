package dev.chaise.storage;

/**
 * An open database: its id, key prefix and metadata, as of {@code entry} (the bytes of its
 * directory entry, which change with every metadata edit). Immutable; cached by
 * {@link DatabaseDirectory}.
 *
 * @param partitioned whether document ids carry a partition ({@link Partitions}), fixed at creation
 * @param access a per-document access database, fixed at creation
 */
public record DbHandle(String name, long id, DatabaseSubspace space, String uuid, int revsLimit, String securityJson,
                       int incarnation, byte[] entry, boolean partitioned, boolean access) {
}
