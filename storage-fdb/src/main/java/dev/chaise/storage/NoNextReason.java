package dev.chaise.storage;

/** Why a {@link Cursor} has no next value (the Record Layer's {@code NoNextReason}). */
public enum NoNextReason {
    /** The range has no more rows. A live feed may find more later, from the same continuation. */
    SOURCE_EXHAUSTED,
    /** As many values as asked for were returned. */
    RETURN_LIMIT_REACHED,
    /** A cursor held to one transaction read its rows per transaction. */
    SCAN_LIMIT_REACHED,
    /** A cursor held to one transaction ran for its time per transaction. */
    TIME_LIMIT_REACHED,
    /** A cursor held to one transaction read its bytes per transaction (its mapper's reads included). */
    BYTE_LIMIT_REACHED;
}
