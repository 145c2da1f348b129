package dev.chaise.storage;

import dev.chaise.kv.KvException;
import dev.chaise.storage.json.InvalidJsonException;

/**
 * A typed failure of the document layer. The HTTP layer maps {@link Kind} to a status code in one
 * place; {@link #error()} and {@link #reason()} become CouchDB's {@code {"error","reason"}} body.
 */
public final class StorageException extends RuntimeException {

    public enum Kind {
        BAD_REQUEST("bad_request"),
        DOC_VALIDATION("doc_validation"),
        ILLEGAL_DOCID("illegal_docid"),
        /** A partition name {@code couch_partition} refuses: 400. */
        ILLEGAL_PARTITION("illegal_partition"),
        /** A write that would grow a partition past {@code [couchdb] max_partition_size}: 403. */
        PARTITION_OVERFLOW("partition_overflow"),
        ILLEGAL_DATABASE_NAME("illegal_database_name"),
        /** A legal name too long for CouchDB's files (see {@code DatabaseDirectory}): 400. */
        DATABASE_NAME_TOO_LONG("database_name_too_long"),
        NOT_FOUND("not_found"),
        CONFLICT("conflict"),
        FILE_EXISTS("file_exists"),
        DOCUMENT_TOO_LARGE("document_too_large"),
        ATTACHMENT_TOO_LARGE("attachment_too_large"),
        /** A request that reached one of FoundationDB's size limits (a value, a transaction): CouchDB's 413. */
        TOO_LARGE("too_large"),
        FORBIDDEN("forbidden"),
        /** A design document with {@code _access} in an access database: 403, as CouchDB's branch. */
        DDOCS_WITH_ACCESS("ddocs_with_access"),
        UNAUTHORIZED("unauthorized"),
        PRECONDITION_FAILED("precondition_failed"),
        MISSING_STUB("missing_stub"),
        /** A validate_doc_update function failed (threw an error, or something other than forbidden/unauthorized): 500 in CouchDB. */
        VALIDATION_FAILED("unknown_error"),
        /** A validate_doc_update function does not compile when a write runs it: 500 in CouchDB, which compiles it only then. */
        COMPILATION_ERROR("compilation_error"),
        /** A design document that cannot be saved as it is (its views, its options): 400. */
        INVALID_DESIGN_DOC("invalid_design_doc"),
        /** A design document whose view functions do not compile, found when it is saved: 400, unlike {@link #COMPILATION_ERROR}. */
        DESIGN_COMPILATION_ERROR("compilation_error"),
        NOT_IMPLEMENTED("not_implemented");

        private final String error;

        Kind(String error) {
            this.error = error;
        }

        public String error() {
            return error;
        }
    }

    private final Kind kind;
    private final String reason;

    public StorageException(Kind kind, String reason) {
        super(kind.error() + ": " + reason);
        this.kind = kind;
        this.reason = reason;
    }

    public Kind kind() {
        return kind;
    }

    public String error() {
        return kind.error();
    }

    public String reason() {
        return reason;
    }

    public static StorageException badRequest(String reason) {
        return new StorageException(Kind.BAD_REQUEST, reason);
    }

    public static StorageException conflict() {
        return new StorageException(Kind.CONFLICT, "Document update conflict.");
    }

    public static StorageException notFound(String reason) {
        return new StorageException(Kind.NOT_FOUND, reason);
    }

    /** Json's refusal of a value as storage's own failure, for a write that reports it per document. */
    public static StorageException of(InvalidJsonException e) {
        return badRequest(e.reason());
    }

    /**
     * {@code t} as storage's typed failure if it is one of FoundationDB's size limits that a
     * request can reach (a {@code _security} object or {@code _local} document over a value, an
     * id over a key, an {@code all_or_nothing} batch over a transaction), else null. Layers above
     * storage do not name the KV seam: this is how they learn that a KV failure is an answer.
     * (FDB's 2106 is {@code invalid_local_address}, a network setting, not a limit.)
     */
    public static StorageException ofKvLimit(Throwable t) {
        if (!(t instanceof KvException k)) return null;
        return switch (k.code()) {
            case KvException.TRANSACTION_TOO_LARGE, KvException.VALUE_TOO_LARGE -> new StorageException(Kind.TOO_LARGE, "the request entity is too large");
            case KvException.KEY_TOO_LARGE -> badRequest("key is too large: ids, names and keys are limited to about 10,000 bytes");
            default -> null;
        };
    }
}
