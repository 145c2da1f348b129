package dev.chaise.http;

import com.fasterxml.jackson.core.JacksonException;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.InvalidJsonException;
import dev.chaise.views.index.ViewException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where failures become CouchDB's {@code {"error": ..., "reason": ...}} bodies and
 * status codes. Typed failures ({@link HttpError}, {@link StorageException}, JSON syntax or values) are
 * answers; anything else is a bug, logged with its stack and answered 500 {@code unknown_error}.
 */
public final class ErrorMapper {
    private static final Logger log = LoggerFactory.getLogger(ErrorMapper.class);

    /** CouchDB's reason for any body it cannot decode as JSON. */
    public static final String INVALID_JSON = "invalid UTF-8 JSON";

    /** {@code members}: what the body carries before {@code error} and {@code reason} ({@link HttpError#withMember}). */
    public record Mapped(int status, String error, String reason, List<Response.Header> headers, Map<String, Object> members) {
        public Mapped(int status, String error, String reason, List<Response.Header> headers) {
            this(status, error, reason, headers, Map.of());
        }

        public Response.Full toResponse() {
            Map<String, Object> body = new LinkedHashMap<>(members);
            body.put("error", error);
            body.put("reason", reason);
            Response.Full r = Response.json(status, body);
            for (Response.Header h : headers) r = r.withHeader(h.name(), h.value());
            return r;
        }
    }

    private ErrorMapper() {}

    public static int status(StorageException.Kind kind) {
        return switch (kind) {
            case BAD_REQUEST, DOC_VALIDATION, ILLEGAL_DOCID, ILLEGAL_PARTITION, ILLEGAL_DATABASE_NAME, DATABASE_NAME_TOO_LONG, INVALID_DESIGN_DOC, DESIGN_COMPILATION_ERROR -> 400;
            case UNAUTHORIZED -> 401;
            case FORBIDDEN, DDOCS_WITH_ACCESS, PARTITION_OVERFLOW -> 403;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case FILE_EXISTS, PRECONDITION_FAILED, MISSING_STUB -> 412;
            case DOCUMENT_TOO_LARGE, ATTACHMENT_TOO_LARGE, TOO_LARGE -> 413;
            case VALIDATION_FAILED, COMPILATION_ERROR -> 500; // CouchDB's status too: the database's own function failed
            case NOT_IMPLEMENTED -> 501;
        };
    }

    public static int status(ViewException.Kind kind) {
        return switch (kind) {
            case QUERY_PARSE_ERROR, INVALID_DESIGN_DOC, COMPILATION_ERROR -> 400;
            case NOT_FOUND -> 404;
            case REDUCE_ERROR, FILTER_ERROR, OS_PROCESS_ERROR, FUNCTION_COMPILATION_ERROR, FUNCTION_ERROR -> 500; // CouchDB's status too: the user's function failed
        };
    }

    /** chttpd's {@code error_info} for an error a design function threw by name: the status of a name it knows, else 500. */
    static int thrownStatus(String error) {
        return switch (error) {
            case "bad_request", "query_parse_error", "doc_validation", "illegal_docid" -> 400;
            case "unauthorized" -> 401;
            case "forbidden" -> 403;
            case "not_found" -> 404;
            case "method_not_allowed" -> 405;
            case "not_acceptable" -> 406;
            case "conflict" -> 409;
            case "gone" -> 410;
            default -> 500;
        };
    }

    public static Mapped map(Throwable t, Request req) {
        Throwable e = unwrap(t);
        if (e instanceof HttpError h) return new Mapped(h.status(), h.error(), h.reason(), h.headers(), h.members());
        if (e instanceof dev.chaise.http.auth.AuthException a) return new Mapped(a.status(), a.error(), a.reason(), List.of());
        if (e instanceof StorageException s) return new Mapped(status(s.kind()), s.error(), s.reason(), List.of());
        if (e instanceof ViewException v) {
            return new Mapped(v.kind() == ViewException.Kind.FUNCTION_ERROR ? thrownStatus(v.error()) : status(v.kind()), v.error(), v.reason(), List.of());
        }
        if (e instanceof dev.chaise.views.mango.MangoException m) return new Mapped(m.status(), m.error(), m.reason(), List.of());
        if (e instanceof dev.chaise.views.search.SearchException s) return new Mapped(s.status(), s.error(), s.reason(), List.of());
        if (e instanceof dev.chaise.replicator.ReplicationException x) return new Mapped(x.status(), x.error(), x.reason(), List.of());
        if (e instanceof dev.chaise.replicator.MultipartStream.Malformed m) return new Mapped(400, "bad_request", m.getMessage(), List.of());
        StorageException limit = StorageException.ofKvLimit(e);
        if (limit != null) return new Mapped(status(limit.kind()), limit.error(), limit.reason(), List.of());
        if (e instanceof JacksonException) return new Mapped(400, "bad_request", INVALID_JSON, List.of());
        if (e instanceof InvalidJsonException j) return new Mapped(400, "bad_request", j.reason(), List.of());
        // The client stopped sending its body; nobody will read this answer.
        if (e instanceof ResponseStream.ClientGoneException) return new Mapped(400, "bad_request", "The request body did not arrive", List.of());
        if (dev.chaise.storage.StoreAvailability.unavailable(e)) return new Mapped(503, "service unavailable", e.getMessage(), List.of());
        log.error("unexpected failure in {}", req == null ? "request" : req, e);
        String reason = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        return new Mapped(500, "unknown_error", reason, List.of());
    }

    private static Throwable unwrap(Throwable t) {
        Throwable e = t;
        while ((e instanceof java.util.concurrent.CompletionException || e instanceof java.util.concurrent.ExecutionException
                || e instanceof java.io.UncheckedIOException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
