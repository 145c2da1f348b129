package dev.chaise.http.auth;

/**
 * A refusal of the authentication layer (bad credentials, a locked account, a malformed cookie or
 * token), with CouchDB's error and reason. {@code ErrorMapper} turns it into the response.
 */
public final class AuthException extends RuntimeException {
    private final int status;
    private final String error;
    private final String reason;

    AuthException(int status, String error, String reason) {
        super(error + ": " + reason);
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

    public static AuthException badRequest(String reason) {
        return new AuthException(400, "bad_request", reason);
    }

    public static AuthException unauthorized(String reason) {
        return new AuthException(401, "unauthorized", reason);
    }

    public static AuthException forbidden(String reason) {
        return new AuthException(403, "forbidden", reason);
    }
}
