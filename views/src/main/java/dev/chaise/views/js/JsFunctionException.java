package dev.chaise.views.js;

/** A user function threw, timed out, failed to compile or returned something that is not JSON. */
public final class JsFunctionException extends Exception {
    private final String error;

    public JsFunctionException(String error, String reason) {
        super(reason, null, false, false);
        this.error = error;
    }

    /** CouchDB's error word, e.g. {@code compilation_error}, {@code reduce_overflow_error}. */
    public String error() {
        return error;
    }

    public String reason() {
        return getMessage();
    }
}
