package dev.chaise.kv;

/**
 * The one conformance suite every backend must pass. A backend's test class extends it and
 * supplies {@link #newStore()}; each test gets a fresh, empty user key space.
 */
public abstract class KvConformanceSuite {

    /** A store whose user key space ({@code ""} to {@code \xff}) is empty. Closed by the test. */
    protected abstract KvStore newStore() throws Exception;
}
