package dev.chaise.kv;

/**
 * The atomic mutations of FoundationDB (API version 520 and later), with its semantics for a
 * missing existing value. Versionstamped writes have their own methods on {@link Transaction}.
 */
public enum MutationType {
    /** Little-endian addition, the existing value truncated or zero-extended to the operand's length. */
    ADD,
    BIT_AND,
    BIT_OR,
    BIT_XOR,
    /** Little-endian unsigned maximum. */
    MAX,
    /** Little-endian unsigned minimum; a missing value becomes the operand. */
    MIN,
    /** Lexicographic maximum. */
    BYTE_MAX,
    /** Lexicographic minimum; a missing value becomes the operand. */
    BYTE_MIN,
    /** Appends the operand unless the result would exceed the value limit. */
    APPEND_IF_FITS,
    /** Clears the key if its value equals the operand. */
    COMPARE_AND_CLEAR
}
