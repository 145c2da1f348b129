package dev.chaise.views.mango;

/**
 * An input Mango refuses, with Mango's {@code error} name ({@code bad_arg},
 * {@code invalid_operator}, ...), reason and HTTP status: 400 for nearly everything, 404 for an
 * index that is not there, 501 for the text indexes Chaise does not build. The {@code _selector}
 * changes filter reports a selector's error as {@code bad_request} with the same reason, as
 * CouchDB does.
 */
public final class MangoException extends RuntimeException {
    private final int status;
    private final String error;
    private final String reason;

    public MangoException(String error, String reason) {
        this(400, error, reason);
    }

    public MangoException(int status, String error, String reason) {
        super(error + ": " + reason, null, false, false);
        this.status = status;
        this.error = error;
        this.reason = reason;
    }

    public int status() {
        return status;
    }

    public String error() {
        return error;
    }

    public String reason() {
        return reason;
    }
}
