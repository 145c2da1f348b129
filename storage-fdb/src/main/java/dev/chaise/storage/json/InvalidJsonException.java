package dev.chaise.storage.json;

/**
 * A value {@link Json} refuses because jiffy refuses it too: a number that overflows to infinity,
 * a string with an unpaired surrogate. Its own type rather than storage's {@code StorageException},
 * so that this package, which every layer uses, needs nothing from storage. A write that reports
 * failures per document turns it into storage's own ({@code StorageException.of}); whoever answers
 * a client answers it as CouchDB does, 400 {@code bad_request} {@value Json#INVALID_JSON}.
 * No stack trace: it is an answer, not a bug.
 */
public final class InvalidJsonException extends RuntimeException {
    InvalidJsonException() {
        super(Json.INVALID_JSON, null, false, false);
    }

    public String reason() {
        return Json.INVALID_JSON;
    }
}
