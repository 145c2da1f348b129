package dev.chaise.http.metrics;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code GET /_node/_local/_system}: CouchDB's VM figures where the JVM has the same thing
 * (uptime, memory, garbage collections), the JVM's own (threads, heap), the server's (open
 * connections) and the storage engine's ({@code storage}).
 */
public final class SystemInfo {
    private SystemInfo() {}

    public static Map<String, Object> of(int openConnections, int openChangesFeeds, String backend, Map<String, Object> engine) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("uptime", ManagementFactory.getRuntimeMXBean().getUptime() / 1000);
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        Map<String, Object> memory = new LinkedHashMap<>();
        memory.put("heap_used", mem.getHeapMemoryUsage().getUsed());
        memory.put("heap_committed", mem.getHeapMemoryUsage().getCommitted());
        memory.put("heap_max", mem.getHeapMemoryUsage().getMax());
        memory.put("non_heap_used", mem.getNonHeapMemoryUsage().getUsed());
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            memory.put(pool.getName().replaceAll("[^A-Za-z0-9]+", "_").toLowerCase(java.util.Locale.ROOT) + "_buffers", pool.getMemoryUsed());
        }
        out.put("memory", memory);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("live", threads.getThreadCount()); // platform threads; request handlers are virtual
        t.put("daemon", threads.getDaemonThreadCount());
        t.put("peak", threads.getPeakThreadCount());
        out.put("threads", t);
        long gcCount = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcCount += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        out.put("garbage_collection_count", gcCount);
        out.put("garbage_collection_time_ms", gcMillis);
        out.put("processors", Runtime.getRuntime().availableProcessors());
        out.put("open_connections", openConnections);
        out.put("open_changes_feeds", openChangesFeeds);
        Map<String, Object> storage = new LinkedHashMap<>();
        storage.put("backend", backend);
        storage.putAll(engine);
        out.put("storage", storage);
        return out;
    }
}
