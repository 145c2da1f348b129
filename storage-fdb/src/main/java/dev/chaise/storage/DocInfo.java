package dev.chaise.storage;

/** A document's winning revision, as {@code _all_docs} and {@code _changes} show it. */
public record DocInfo(String id, RevId rev, boolean deleted) {}
