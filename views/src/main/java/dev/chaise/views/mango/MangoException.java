package dev.chaise.views.mango;

/**
 * A selector Mango refuses, with Mango's {@code error} name ({@code bad_arg},
 * {@code invalid_operator}, ...) and reason. Always a 400: {@code _find} reports it as is, the
 * {@code _selector} changes filter as {@code bad_request} with the same reason, as CouchDB does.
 */
public final class MangoException extends RuntimeException {
    private final String error;
    private final String reason;

    public MangoException(String error, String reason) {
        super(error + ": " + reason, null, false, false);
        this.error = error;
        this.reason = reason;
    }

    public String error() {
        return error;
    }

    public String reason() {
        return reason;
    }
}
