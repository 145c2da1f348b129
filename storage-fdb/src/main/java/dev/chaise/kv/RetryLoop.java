package dev.chaise.kv;

import dev.chaise.threads.NoWaiting;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * FDB's retry loop: exponential backoff from 10 ms to 1 s with jitter, as {@code onError} does, at
 * most {@link KvStore#retryLimit()} attempts (then {@link KvException#retryLimitReached}).
 */
final class RetryLoop {
    private static final long INITIAL_BACKOFF_MS = 10;
    private static final long MAX_BACKOFF_MS = 1_000;

    private RetryLoop() {}

    static <T> T run(KvStore store, KvStore.TxBody<T> body, KvStore.UnknownResultCheck<T> check) {
        long backoff = INITIAL_BACKOFF_MS;
        int limit = store.retryLimit();
        boolean unknown = false;
        for (int attempt = 1; ; attempt++) {
            try (Transaction tx = store.createTransaction()) {
                if (unknown) {
                    Optional<T> done = check.committed(tx);
                    if (done.isPresent()) {
                        tx.commit(); // read-only: confirms the check's reads at one version
                        return done.get();
                    }
                }
                T result = body.apply(tx);
                tx.commit();
                return result;
            } catch (KvException e) {
                if (e.maybeCommitted() && check != null) {
                    unknown = true;
                } else if (!e.isRetryableNotCommitted()) {
                    throw e;
                }
                if (attempt >= limit) throw KvException.retryLimitReached(e, attempt);
                NoWaiting.check("a retry's backoff");
                store.timer().increment(StoreTimer.Counts.RETRIES);
                long sleep = ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1);
                store.timer().time(StoreTimer.Waits.RETRY_BACKOFF, () -> sleepMillis(sleep));
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
            }
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: interrupted while backing off", e);
        }
    }
}
