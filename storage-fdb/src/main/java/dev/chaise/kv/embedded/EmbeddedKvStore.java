package dev.chaise.kv.embedded;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;

/** Placeholder signature; the engine lands in the next commit. */
public final class EmbeddedKvStore implements KvStore {
    public static EmbeddedKvStore open(EmbeddedOptions options) { throw new UnsupportedOperationException("engine not yet landed"); }
    @Override public Transaction createTransaction() { throw new UnsupportedOperationException(); }
    @Override public StoreTimer timer() { throw new UnsupportedOperationException(); }
    @Override public String backendName() { return "embedded"; }
    @Override public void close() {}
}
