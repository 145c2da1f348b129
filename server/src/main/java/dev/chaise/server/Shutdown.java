package dev.chaise.server;

import java.lang.reflect.Proxy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The server's stop, run once whoever asks first (a signal, the JVM's shutdown hook); later callers wait for it. */
final class Shutdown {
    private static final Logger log = LoggerFactory.getLogger(Shutdown.class);
    private final Runnable stop;
    private final AtomicBoolean started = new AtomicBoolean();
    private final CountDownLatch done = new CountDownLatch(1);

    Shutdown(Runnable stop) {
        this.stop = stop;
    }

    void run() {
        if (!started.compareAndSet(false, true)) {
            await();
            return;
        }
        try {
            stop.run();
        } catch (RuntimeException e) {
            log.error("stopping failed", e);
        } finally {
            done.countDown();
        }
    }

    void await() {
        try {
            done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Runs {@code action} on {@code SIG<name>} instead of the JVM's default (exit 128+n). Through
     * reflection: sun.misc.Signal (jdk.unsupported) is the JDK's only way, and javac warns on direct use.
     */
    static void onSignal(String name, Runnable action) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handler = Class.forName("sun.misc.SignalHandler");
            Object h = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler}, (proxy, method, args) -> switch (method.getName()) {
                case "handle" -> {
                    action.run();
                    yield null;
                }
                case "hashCode" -> System.identityHashCode(proxy);
                case "equals" -> proxy == args[0];
                default -> "chaise SIG" + name + " handler";
            });
            signal.getMethod("handle", signal, handler).invoke(null, signal.getConstructor(String.class).newInstance(name), h);
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.warn("cannot handle SIG{} ({}); it stops the server through the shutdown hook, with the JVM's exit code", name, e.toString());
        }
    }
}
