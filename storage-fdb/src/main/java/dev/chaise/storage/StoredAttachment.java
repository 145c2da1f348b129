package dev.chaise.storage;

/**
 * An attachment body stored ahead of the document that will name it, under its digest: the md5 of
 * the stored bytes, as CouchDB names them.
 *
 * @param length the identity (decoded) length
 * @param encoding {@code "gzip"} when the stored bytes are gzipped, else null
 * @param encodedLength the stored length (the length again for identity)
 */
public record StoredAttachment(String digest, long length, String encoding, long encodedLength) {
    public StoredAttachment(String digest, long length) {
        this(digest, length, null, length);
    }
}
