package dev.chaise.kv;

/** One key and its value, as returned by range reads. */
public record KeyValue(byte[] key, byte[] value) {}
