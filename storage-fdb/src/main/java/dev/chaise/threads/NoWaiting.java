package dev.chaise.threads;

/**
 * Marks the current thread as one that must not wait for another (Netty's event loop, answering a
 * read itself instead of handing it to a virtual thread). Code that is about to wait
 * ({@link #check}: a retry's backoff, a password hash computed on another pool) throws
 * {@link Deferred} instead, before it has changed anything, and the caller runs the whole request
 * again where waiting is allowed. Outside {@link #call} every check passes.
 */
public final class NoWaiting {
    private static final ThreadLocal<Boolean> HERE = new ThreadLocal<>();

    private NoWaiting() {}

    /** The work would have waited on a thread that must not: run it again elsewhere. Carries no stack. */
    public static final class Deferred extends RuntimeException {
        Deferred(String what) {
            super(what, null, false, false);
        }
    }

    /** Runs {@code work} with this thread marked; a {@link Deferred} passes through to the caller. */
    public static <T> T call(java.util.function.Supplier<T> work) {
        HERE.set(Boolean.TRUE);
        try {
            return work.get();
        } finally {
            HERE.remove();
        }
    }

    /** Whether this thread must not wait now. */
    public static boolean here() {
        return HERE.get() != null;
    }

    /** Throws {@link Deferred} (naming {@code what} would have waited) if this thread must not wait. */
    public static void check(String what) {
        if (here()) throw new Deferred(what);
    }
}
