package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * Armed watches by key. The sequencer reports every key and range a durable batch touched; the
 * watches on them fire (possibly spuriously, as FDB allows). Futures complete on a separate
 * thread so a watcher's callbacks never run on the commit path.
 */
final class Watches implements AutoCloseable {
    private final ConcurrentSkipListMap<byte[], List<CompletableFuture<Void>>> byKey = new ConcurrentSkipListMap<>(Keys::compare);
    private final ExecutorService firer = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().name("chaise-watches").daemon().unstarted(r));
    private final Function<byte[], byte[]> latest;
    private final FaultInjection faults;
    private int count;
    /** Distinct keys in {@link #byKey} (its size() walks it). */
    private int keysHeld;
    /**
     * Watched keys per {@link KeyBuckets} bucket. A bulk write touches a dozen keys a document, and
     * the watched keys (job records, feeds' counters) usually span the databases' key space, so
     * the skip list lookup per touched key that this spares was 2.5 % of a {@code _bulk_docs}
     * document's server CPU.
     */
    private final int[] buckets = new int[KeyBuckets.SIZE];

    Watches(Function<byte[], byte[]> latest, FaultInjection faults) {
        this.latest = latest;
        this.faults = faults;
    }

    /**
     * Arms a watch: fires at once if the key already differs from what its transaction saw. The
     * watch is registered before the comparison, so a commit cannot slip between them unseen: it
     * either finds the watch registered, or published its value before the comparison reads it.
     */
    void register(byte[] key, byte[] seen, CompletableFuture<Void> future) {
        synchronized (this) {
            if (count >= KvLimits.MAX_WATCHES) {
                future.completeExceptionally(new KvException(KvException.TOO_MANY_WATCHES, "too_many_watches: too many watches currently set"));
                return;
            }
            byKey.computeIfAbsent(key, k -> {
                keysHeld++;
                return new ArrayList<>();
            }).add(future);
            buckets[KeyBuckets.of(key)]++;
            count++;
        }
        future.whenComplete((v, e) -> forget(key, future)); // fired, or cancelled by its owner
        faults.at(FaultInjection.Point.WATCH_ARM);
        try {
            if (!Arrays.equals(latest.apply(key), seen)) firer.execute(() -> future.complete(null));
        } catch (KvException e) {
            future.completeExceptionally(e); // the store closed meanwhile
        }
    }

    private synchronized void forget(byte[] key, CompletableFuture<Void> future) {
        List<CompletableFuture<Void>> l = byKey.get(key);
        if (l != null && l.remove(future)) {
            buckets[KeyBuckets.of(key)]--;
            count--;
            if (l.isEmpty()) {
                byKey.remove(key);
                keysHeld--;
            }
        }
    }

    /** A durable batch's transactions: fires the watches on what they touched. */
    void touched(List<Touched> batch) {
        if (byKey.isEmpty()) return;
        List<CompletableFuture<Void>> fire = new ArrayList<>();
        synchronized (this) {
            for (Touched t : batch) {
                if (byKey.isEmpty()) break;
                if (t.cheaperToLookUp(keysHeld)) {
                    // Watched keys are few (job records, feeds' counters), a bulk write's keys many: ask about each watched key.
                    for (var it = byKey.entrySet().iterator(); it.hasNext(); ) {
                        var e = it.next();
                        if (!t.touches(e.getKey())) continue;
                        take(e.getKey(), e.getValue(), fire);
                        it.remove();
                    }
                    continue;
                }
                // The buckets skip almost every key, where a lookup walked the skip list.
                for (byte[] k : t.keys()) {
                    if (buckets[KeyBuckets.of(k)] != 0) take(k, byKey.remove(k), fire);
                }
                for (byte[][] r : t.ranges()) {
                    var sub = byKey.subMap(r[0], true, r[1], false);
                    for (var e : new ArrayList<>(sub.entrySet())) take(e.getKey(), e.getValue(), fire);
                    sub.clear();
                }
            }
        }
        if (!fire.isEmpty()) firer.execute(() -> fire.forEach(f -> f.complete(null)));
    }

    /** A watched key's futures, taken to fire; the caller removes the key from {@link #byKey}. */
    private void take(byte[] key, List<CompletableFuture<Void>> l, List<CompletableFuture<Void>> into) {
        if (l == null) return;
        into.addAll(l);
        count -= l.size();
        keysHeld--;
        buckets[KeyBuckets.of(key)] -= l.size();
    }

    @Override
    public void close() {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        synchronized (this) {
            byKey.values().forEach(all::addAll);
            byKey.clear();
            java.util.Arrays.fill(buckets, 0);
            count = 0;
            keysHeld = 0;
        }
        all.forEach(f -> f.completeExceptionally(new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed")));
        firer.shutdown();
    }
}
