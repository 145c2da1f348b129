package dev.chaise.storage;

/** One row of the changes feed (RFC D): a document at the sequence of its last change. */
public record Change(Sequence seq, String id, RevId rev, int branchCount, boolean deleted) {}
