package dev.chaise.views.index;

/** A view request CouchDB answers with an error; http-api's ErrorMapper gives each kind its status. */
public final class ViewException extends RuntimeException {

    public enum Kind {
        /** 400: a bad query parameter or combination. */
        QUERY_PARSE_ERROR("query_parse_error"),
        /** 400: a design document whose views cannot be indexed. */
        INVALID_DESIGN_DOC("invalid_design_doc"),
        /** 404: no such design document or view. */
        NOT_FOUND("not_found"),
        /** 500 in CouchDB too: a JavaScript reduce failed. */
        REDUCE_ERROR("reduce_error"),
        /** 500 in CouchDB too: a filter function threw on a document of the feed. */
        FILTER_ERROR("filter_error"),
        /** 400: the view's map function does not compile. */
        COMPILATION_ERROR("compilation_error"),
        /** 500, as in CouchDB: a filter function does not compile when a request uses it (CouchDB compiles filters only then). */
        FUNCTION_COMPILATION_ERROR("compilation_error"),
        /**
         * 500, the whole request: a function (map, validate_doc_update, show, ...) ran out of time
         * or memory, or the functions together ran too long for the write's transaction (CouchDB
         * fails the request when its JavaScript process times out).
         */
        OS_PROCESS_ERROR("os_process_error"),
        /**
         * A show, list or update function failed: the error is the one it threw by name
         * ({@code ['error', 'not_found', ...]}, {@code {error, reason}}), whose status is CouchDB's
         * for that name, or {@code render_error} (500) for anything else it threw.
         */
        FUNCTION_ERROR("render_error");

        private final String error;

        Kind(String error) {
            this.error = error;
        }

        public String error() {
            return error;
        }
    }

    private final Kind kind;
    private final String error;

    public ViewException(Kind kind, String reason) {
        this(kind, kind.error(), reason);
    }

    public ViewException(Kind kind, String error, String reason) {
        super(reason, null, false, false);
        this.kind = kind;
        this.error = error;
    }

    /**
     * The engine stopped a call ({@code timeout}, {@code memory_limit}): couch_os_process's
     * os_process_error, with its words for a query server that did not answer in time.
     */
    public static ViewException engineStopped(String error, String reason) {
        return new ViewException(Kind.OS_PROCESS_ERROR, error.equals("timeout") ? "OS process timed out." : reason);
    }

    public Kind kind() {
        return kind;
    }

    public String error() {
        return error;
    }

    public String reason() {
        return getMessage();
    }
}
