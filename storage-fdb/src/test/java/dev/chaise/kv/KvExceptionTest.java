package dev.chaise.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The seam's error predicates, pinned to fdb_c's {@code fdb_error_predicate} as released in
 * FoundationDB 7.3.68 (the client fdb-java 7.3.68 loads; bindings/c/fdb_c.cpp), which fdb-java
 * exposes only through the native library. {@code FdbErrorPredicateTest} compares them with the
 * library itself where it is installed.
 */
class KvExceptionTest {
    /** RETRYABLE_NOT_COMMITTED in fdb_c 7.3.68. */
    static final Set<Integer> RETRYABLE_NOT_COMMITTED = Set.of(
            1020, // not_committed
            1007, // transaction_too_old
            1009, // future_version
            1038, // database_locked
            1078, // grv_proxy_memory_limit_exceeded
            1042, // commit_proxy_memory_limit_exceeded
            1051, // batch_transaction_throttled
            1037, // process_behind
            1213, // tag_throttled
            1223); // proxy_tag_throttled
    /** MAYBE_COMMITTED in fdb_c 7.3.68. */
    static final Set<Integer> MAYBE_COMMITTED = Set.of(
            1021, // commit_unknown_result
            1039); // cluster_version_changed

    private static Set<Integer> codesWhere(java.util.function.Predicate<KvException> p) {
        Set<Integer> out = new TreeSet<>();
        for (int code = 0; code < 10_000; code++) if (p.test(new KvException(code, "x"))) out.add(code);
        return out;
    }

    @Test
    void predicatesAreFdbCsOf73() {
        assertEquals(new TreeSet<>(RETRYABLE_NOT_COMMITTED), codesWhere(KvException::isRetryableNotCommitted));
        assertEquals(new TreeSet<>(MAYBE_COMMITTED), codesWhere(KvException::maybeCommitted));
        Set<Integer> retryable = new TreeSet<>(RETRYABLE_NOT_COMMITTED);
        retryable.addAll(MAYBE_COMMITTED);
        assertEquals(retryable, codesWhere(KvException::isRetryable), "RETRYABLE is the union of the two");
    }

    @Test
    void unavailableIsWhatASecondTryMayCure() {
        for (int code : new int[] {1004, 1031, 1025, 1510, 1037, 1038, 1213}) assertTrue(new KvException(code, "x").unavailable(), "" + code);
        for (int code : new int[] {1020, 1007, 1021, 2101, 2102, 2103, 2000, 2004, 4100}) assertFalse(new KvException(code, "x").unavailable(), "" + code);
        KvException gaveUp = KvException.retryLimitReached(KvException.notCommitted(), 100);
        assertTrue(gaveUp.unavailable(), "contention past the retry limit: try later");
        assertTrue(gaveUp.retryLimitReached());
        assertEquals(KvException.NOT_COMMITTED, gaveUp.code(), "the last attempt's code is kept");
        assertTrue(gaveUp.getMessage().startsWith("1020 not_committed"), gaveUp.getMessage());
        assertTrue(gaveUp.getMessage().contains("100 attempts"), gaveUp.getMessage());
    }

    @Test
    void theRetryLoopStopsAtTheStoresLimit() {
        int[] attempts = {0};
        KvStore store = new KvStore() {
            @Override
            public Transaction createTransaction() {
                attempts[0]++;
                throw new KvException(KvException.PROCESS_BEHIND, "process_behind: storage process does not have recent mutations");
            }

            @Override
            public int retryLimit() {
                return 5;
            }

            @Override
            public StoreTimer timer() {
                return new StoreTimer();
            }

            @Override
            public String backendName() {
                return "test";
            }

            @Override
            public void close() {}
        };
        KvException e = org.junit.jupiter.api.Assertions.assertThrows(KvException.class, () -> store.run(tx -> null));
        assertEquals(5, attempts[0]);
        assertTrue(e.retryLimitReached());
        assertEquals(KvException.PROCESS_BEHIND, e.code());
    }
}
