package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.chaise.storage.StorageException;
import dev.chaise.storage.StorageException.Kind;
import dev.chaise.storage.json.Json;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ErrorMapperTest {
    @Test
    void everyStorageKindHasCouchDbsStatus() {
        Map<Kind, Integer> want = Map.ofEntries(
                Map.entry(Kind.BAD_REQUEST, 400), Map.entry(Kind.DOC_VALIDATION, 400), Map.entry(Kind.ILLEGAL_DOCID, 400),
                Map.entry(Kind.ILLEGAL_DATABASE_NAME, 400), Map.entry(Kind.NOT_FOUND, 404), Map.entry(Kind.CONFLICT, 409),
                Map.entry(Kind.FILE_EXISTS, 412), Map.entry(Kind.PRECONDITION_FAILED, 412), Map.entry(Kind.DOCUMENT_TOO_LARGE, 413), Map.entry(Kind.ATTACHMENT_TOO_LARGE, 413), Map.entry(Kind.TOO_LARGE, 413),
                Map.entry(Kind.FORBIDDEN, 403), Map.entry(Kind.DDOCS_WITH_ACCESS, 403), Map.entry(Kind.UNAUTHORIZED, 401), Map.entry(Kind.MISSING_STUB, 412),
                Map.entry(Kind.VALIDATION_FAILED, 500), Map.entry(Kind.COMPILATION_ERROR, 500), Map.entry(Kind.NOT_IMPLEMENTED, 501),
                Map.entry(Kind.INVALID_DESIGN_DOC, 400), Map.entry(Kind.DATABASE_NAME_TOO_LONG, 400), Map.entry(Kind.DESIGN_COMPILATION_ERROR, 400),
                Map.entry(Kind.ILLEGAL_PARTITION, 400), Map.entry(Kind.PARTITION_OVERFLOW, 403));
        assertEquals(Kind.values().length, want.size(), "a new Kind needs a status here and in ErrorMapper");
        for (Kind k : Kind.values()) {
            ErrorMapper.Mapped m = ErrorMapper.map(new StorageException(k, "why"), null);
            assertEquals(want.get(k), m.status(), k.name());
            assertEquals(k.error(), m.error());
            assertEquals("why", m.reason());
            assertEquals("{\"error\":\"" + k.error() + "\",\"reason\":\"why\"}\n", new String(m.toResponse().body()));
        }
    }

    /** An unreachable cluster, a timeout, the retry limit, a store that stopped writing: 503, as CouchDB answers a cluster that cannot serve. */
    @Test
    void anUnavailableStoreIs503() {
        for (int code : new int[] {1031, 1037, 1510, 1025}) {
            ErrorMapper.Mapped m = ErrorMapper.map(new dev.chaise.kv.KvException(code, "why"), null);
            assertEquals(503, m.status(), "" + code);
            assertEquals("service unavailable", m.error());
        }
        ErrorMapper.Mapped gaveUp = ErrorMapper.map(dev.chaise.kv.KvException.retryLimitReached(dev.chaise.kv.KvException.notCommitted(), 100), null);
        assertEquals(503, gaveUp.status());
        assertEquals(500, ErrorMapper.map(new dev.chaise.kv.KvException(4100, "internal_error: a bug"), null).status(), "a bug is not unavailability");
    }

    @Test
    void jsonErrorsAreInvalidUtf8Json() {
        for (String bad : new String[] {"{", "[1,]", "\"\\ud800\"", "1e400", "{} {}"}) {
            try {
                Json.MAPPER.readTree(bad);
            } catch (Exception e) {
                ErrorMapper.Mapped m = ErrorMapper.map(e, null);
                assertEquals(400, m.status(), bad);
                assertEquals("bad_request", m.error());
                assertEquals("invalid UTF-8 JSON", m.reason());
                continue;
            }
            throw new AssertionError("parsed: " + bad);
        }
    }

    @Test
    void httpErrorsKeepStatusAndHeaders() {
        ErrorMapper.Mapped m = ErrorMapper.map(HttpError.methodNotAllowed("GET,HEAD"), null);
        assertEquals(405, m.status());
        assertEquals("GET,HEAD", m.toResponse().header("Allow"));
        assertEquals(415, ErrorMapper.map(HttpError.badContentType("x"), null).status());
        assertEquals(416, ErrorMapper.map(HttpError.rangeNotSatisfiable(), null).status());
        assertEquals(417, ErrorMapper.map(HttpError.expectationFailed("x"), null).status());
        assertEquals(413, ErrorMapper.map(HttpError.tooLarge(), null).status());
    }

    @Test
    void anythingElseIs500UnknownError() {
        ErrorMapper.Mapped m = ErrorMapper.map(new NullPointerException("boom"), null);
        assertEquals(500, m.status());
        assertEquals("unknown_error", m.error());
    }
}
