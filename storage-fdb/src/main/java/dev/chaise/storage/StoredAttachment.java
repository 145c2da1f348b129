package dev.chaise.storage;

/** An attachment body stored ahead of the document that will name it, under its digest. */
public record StoredAttachment(String digest, long length) {}
