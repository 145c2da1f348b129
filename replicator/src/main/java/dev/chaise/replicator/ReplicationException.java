package dev.chaise.replicator;

/**
 * A replication that cannot start or go on, with CouchDB's error, reason and HTTP status
 * ({@code db_not_found} 404, {@code unauthorized} 401, {@code invalid_replication} 400, ...).
 * The HTTP layer's ErrorMapper turns it into the response; the scheduler shows
 * {@link #summary()} as a job's crash reason.
 */
public final class ReplicationException extends RuntimeException {
    private final int status;
    private final String error;
    private final String reason;

    public ReplicationException(int status, String error, String reason) {
        super(error + ": " + reason, null, false, false);
        this.status = status;
        this.error = error;
        this.reason = reason;
    }

    public ReplicationException(int status, String error, String reason, Throwable cause) {
        super(error + ": " + reason, cause, false, false);
        this.status = status;
        this.error = error;
        this.reason = reason;
    }

    public static ReplicationException badRequest(String reason) {
        return new ReplicationException(400, "bad_request", reason);
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

    /** CouchDB's {@code rep_error_to_binary}: "error: reason", as _scheduler shows a crash. */
    public String summary() {
        return error + ": " + reason;
    }
}
