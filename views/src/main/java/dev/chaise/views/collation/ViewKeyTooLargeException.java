package dev.chaise.views.collation;

/**
 * An emitted key over the view key size limit. It fails the row's document for that view (CouchDB
 * skips the document and logs a size error), not the whole index build.
 */
public final class ViewKeyTooLargeException extends RuntimeException {
    private final long size;
    private final long limit;
    private final boolean encoded;

    public ViewKeyTooLargeException(long size, long limit, boolean encoded) {
        super((encoded ? "encoded" : "JSON") + " view key is " + size + " bytes, over the limit of " + limit);
        this.size = size;
        this.limit = limit;
        this.encoded = encoded;
    }

    public long size() {
        return size;
    }

    public long limit() {
        return limit;
    }

    /** True if the encoded (sort key) form was too large though the JSON was within its limit. */
    public boolean encoded() {
        return encoded;
    }
}
