package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Where libfdb_c is missing, opening the backend says so and how to fix it. */
class FdbKvStoreUnavailableTest {

    @Test
    void missingClientLibraryGivesAClearError() {
        Optional<String> problem = FdbKvStore.nativeClientProblem();
        assumeTrue(problem.isPresent(), "libfdb_c loads here, so there is no failure to check");
        FdbUnavailableException e = assertThrows(FdbUnavailableException.class, () -> FdbKvStore.open((String) null));
        assertTrue(e.getMessage().contains("libfdb_c"), e.getMessage());
        assertTrue(e.getMessage().contains("foundationdb-clients"), e.getMessage());
        assertTrue(e.getMessage().contains("storage = embedded"), e.getMessage());
        // The first cause is kept: later attempts see only NoClassDefFoundError from the JVM.
        assertTrue(e.getCause() instanceof LinkageError || e.getCause() instanceof com.apple.foundationdb.FDBException, String.valueOf(e.getCause()));
        FdbUnavailableException again = assertThrows(FdbUnavailableException.class, () -> FdbKvStore.open((String) null));
        assertTrue(again.getCause() == e.getCause());
    }
}
