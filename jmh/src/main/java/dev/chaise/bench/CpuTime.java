package dev.chaise.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The same benchmarks timed by the calling thread's CPU time instead of the wall clock: on a
 * machine shared with other work (two cores, load 15-25 while this was written) JMH's wall-clock
 * averages swing by 2-5x, while the CPU a call takes moves little. Single-threaded methods only.
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.chaise.bench.CpuTime [seconds per method] [Class#method ...]</pre>
 * (class names as in {@code java -jar benchmarks.jar -l}; no method: all of the class's).
 */
public final class CpuTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CpuTime() {}

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        for (int a = 1; a < args.length; a++) {
            String[] parts = args[a].split("#", 2);
            Class<?> c = Class.forName(parts[0]);
            Object bench = c.getConstructor().newInstance();
            for (Method m : annotated(c, Setup.class)) m.invoke(bench);
            try {
                for (Method m : annotated(c, Benchmark.class)) {
                    if (parts.length == 2 && !m.getName().equals(parts[1])) continue;
                    run(bench, m, seconds / 3); // warm-up
                    System.out.printf("%s.%s: %.0f ns CPU per call%n", c.getSimpleName(), m.getName(), run(bench, m, seconds));
                }
            } finally {
                for (Method m : annotated(c, TearDown.class)) m.invoke(bench);
            }
        }
    }

    private static List<Method> annotated(Class<?> c, Class<? extends java.lang.annotation.Annotation> a) {
        List<Method> out = new ArrayList<>();
        for (Method m : c.getMethods()) if (m.isAnnotationPresent(a)) out.add(m);
        out.sort(java.util.Comparator.comparing(Method::getName));
        return out;
    }

    /** CPU nanoseconds per call, over about {@code seconds} of this thread's CPU. */
    private static double run(Object bench, Method m, double seconds) throws Exception {
        long budget = (long) (seconds * 1e9);
        long start = THREADS.getCurrentThreadCpuTime();
        long calls = 0;
        long used;
        do {
            for (int i = 0; i < 1000; i++) m.invoke(bench); // a reflective call is never optimized away
            calls += 1000;
            used = THREADS.getCurrentThreadCpuTime() - start;
        } while (used < budget);
        return (double) used / calls;
    }
}
