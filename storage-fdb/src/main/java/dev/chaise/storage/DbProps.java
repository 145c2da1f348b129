package dev.chaise.storage;

/**
 * What a database is made as, fixed for its life ({@code props} in {@code GET /{db}}).
 *
 * @param partitioned document ids carry a partition ({@link Partitions})
 * @param access a per-document access database ({@link AccessRules}), admin-only at first
 */
public record DbProps(boolean partitioned, boolean access) {
    public static final DbProps PLAIN = new DbProps(false, false);
}
