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
 * With {@code --process}, the whole process's CPU less its JIT compiler threads': for calls whose
 * work is spread over other threads (the committers that lead group commits, RocksDB's
 * flushes and compactions, GC).
 *
 * <pre>java -cp jmh/target/benchmarks.jar dev.chaise.bench.CpuTime [--process] [seconds per method] [Class#method ...]</pre>
 * (class names as in {@code java -jar benchmarks.jar -l}; no method: all of the class's).
 */
public final class CpuTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CpuTime() {}

    public static void main(String[] args) throws Exception {
        boolean process = args[0].equals("--process");
        if (process) args = java.util.Arrays.copyOfRange(args, 1, args.length);
        double seconds = Double.parseDouble(args[0]);
        for (int a = 1; a < args.length; a++) {
            String[] parts = args[a].split("#", 2);
            Class<?> c = Class.forName(parts[0]);
            Object bench = c.getConstructor().newInstance();
            for (Method m : annotated(c, Setup.class)) m.invoke(bench);
            try {
                for (Method m : annotated(c, Benchmark.class)) {
                    if (parts.length == 2 && !m.getName().equals(parts[1])) continue;
                    run(bench, m, seconds / 3, process); // warm-up
                    System.out.printf("%s.%s: %.0f ns %s per call%n", c.getSimpleName(), m.getName(), run(bench, m, seconds, process),
                            process ? "process CPU less JIT" : "CPU");
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

    /** CPU nanoseconds per call, over about {@code seconds} of this thread's (or the process's) CPU. */
    private static double run(Object bench, Method m, double seconds, boolean process) throws Exception {
        long budget = (long) (seconds * 1e9);
        long start = cpu(process);
        m.invoke(bench);
        long calls = 1;
        // Calls between two readings: about 20 ms of CPU, so slow calls (a bulk write) are not run a thousand times more than
        // asked, and reading the process's CPU (a /proc file per thread) stays a small part of what is measured.
        int group = (int) Math.max(1, Math.min(1000, 20_000_000 / Math.max(1, cpu(process) - start)));
        long used;
        do {
            for (int i = 0; i < group; i++) m.invoke(bench); // a reflective call is never optimized away
            calls += group;
            used = cpu(process) - start;
        } while (used < budget);
        return (double) used / calls;
    }

    private static long cpu(boolean process) throws java.io.IOException {
        return process ? processCpuLessJit() : THREADS.getCurrentThreadCpuTime();
    }

    /** The process's CPU, less what its JIT compiler threads used (from /proc: clock ticks, taken as 10 ms). */
    private static long processCpuLessJit() throws java.io.IOException {
        long all = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        long jitTicks = 0;
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path t : tasks.toList()) {
                try {
                    if (!java.nio.file.Files.readString(t.resolve("comm")).contains("CompilerThre")) continue;
                    String stat = java.nio.file.Files.readString(t.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    jitTicks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                } catch (java.nio.file.NoSuchFileException gone) {
                    // a compiler thread that ended meanwhile
                }
            }
        }
        return all - jitTicks * 10_000_000L;
    }
}
