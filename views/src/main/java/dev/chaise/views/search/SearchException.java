package dev.chaise.views.search;

/** A search request Nouveau answers with an error; http-api's ErrorMapper renders it with this status. */
public final class SearchException extends RuntimeException {
    private final int status;
    private final String error;
    private final String reason;

    public SearchException(int status, String error, String reason) {
        super(error + ": " + reason, null, false, false);
        this.status = status;
        this.error = error;
        this.reason = reason;
    }

    /** Nouveau's 400 for what its service refuses (a query Lucene cannot parse, a field of two types, ...). */
    static SearchException badRequest(String reason) {
        return new SearchException(400, "bad_request", reason);
    }

    /** nouveau_httpd's 400 for a parameter it refuses before searching. */
    public static SearchException queryParse(String reason) {
        return new SearchException(400, "query_parse_error", reason);
    }

    static SearchException notFound(String reason) {
        return new SearchException(404, "not_found", reason);
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
