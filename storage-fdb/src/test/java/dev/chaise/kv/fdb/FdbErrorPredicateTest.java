package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.apple.foundationdb.FDBException;
import dev.chaise.kv.KvException;
import org.junit.jupiter.api.Test;

/** Where libfdb_c is installed: the seam's predicates are the library's, code for code. */
class FdbErrorPredicateTest {
    @Test
    void seamPredicatesMatchTheNativeLibrary() {
        var problem = FdbKvStore.nativeClientProblem();
        assumeTrue(problem.isEmpty(), () -> "libfdb_c is not installed here: " + problem.orElse(""));
        for (int code = 1; code < 5_000; code++) {
            FDBException fdb = new FDBException("x", code);
            KvException kv = new KvException(code, "x");
            assertEquals(fdb.isRetryable(), kv.isRetryable(), "retryable " + code);
            assertEquals(fdb.isMaybeCommitted(), kv.maybeCommitted(), "maybe committed " + code);
            assertEquals(fdb.isRetryableNotCommitted(), kv.isRetryableNotCommitted(), "retryable not committed " + code);
        }
    }
}
