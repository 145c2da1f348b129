package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many virtual threads edit the same few documents, each with the revision it last read, reading
 * again after a 409. No update may be lost: every success is a distinct revision whose parent is
 * the revision its writer read, all of them lie on the one branch of their document, the number
 * of successes is the winner's position minus one, and every other attempt was a 409. Run plain
 * and with injected commit faults (1020, 1021 half committed, 1007).
 */
class ConcurrentUpdatesTest {
    static final int THREADS = 16;
    static final int SUCCESSES_PER_THREAD = 25;
    static final List<String> IDS = List.of("hot-1", "hot-2", "hot\u0000-3");

    record Success(String id, RevId base, RevId rev) {}

    @Test
    @Timeout(60)
    void noLostUpdates() throws Exception {
        try (StoreFixture f = StoreFixture.open()) {
            run(f);
        }
    }

    @Test
    @Timeout(60)
    void noLostUpdatesDespiteCommitFaults() throws Exception {
        try (StoreFixture f = StoreFixture.withFaults(0.04, 4242L)) {
            run(f);
            System.out.println("concurrency with faults: " + f.injectedFaults() + " injected faults, " + f.commitsRetried() + " retries");
            assertTrue(f.injectedFaults() > 0, "faults were injected");
        }
    }

    private static void run(StoreFixture f) throws Exception {
        String db = f.newDb("hot", 0);
        Map<String, RevId> first = new HashMap<>();
        for (String id : IDS) {
            UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit(id, null, false, body(-1, 0))), true).getFirst();
            assertTrue(r.ok());
            first.put(id, r.rev());
        }
        ConcurrentLinkedQueue<Success> successes = new ConcurrentLinkedQueue<>();
        AtomicInteger conflicts = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(ex.submit(() -> {
                    Random random = new Random(thread);
                    start.await();
                    int attempt = 0;
                    for (int done = 0; done < SUCCESSES_PER_THREAD; ) {
                        String id = IDS.get(random.nextInt(IDS.size()));
                        StoredDoc seen = f.store.open(db).get(id, null, false);
                        UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit(id, seen.rev(), false, body(thread, attempt++))), true).getFirst();
                        if (r.ok()) {
                            successes.add(new Success(id, seen.rev(), r.rev()));
                            done++;
                        } else {
                            assertEquals(StorageException.Kind.CONFLICT, r.error().kind(), "a loser gets 409, not " + r.error());
                            conflicts.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> fu : futures) fu.get();
        }

        assertEquals(THREADS * SUCCESSES_PER_THREAD, successes.size());
        Set<RevId> revs = new HashSet<>();
        for (Success s : successes) assertTrue(revs.add(s.rev()), "every success is a distinct revision: " + s);
        for (String id : IDS) {
            List<Success> mine = successes.stream().filter(s -> s.id().equals(id)).toList();
            List<EditBranch> branches = f.store.open(db).branches(id);
            assertEquals(1, branches.size(), "interactive edits of the winner never branch: " + branches);
            EditBranch b = branches.getFirst();
            assertEquals(mine.size(), b.leaf().pos() - 1, "successes = final pos - 1 for " + id);
            List<RevId> history = b.revs();
            assertEquals(first.get(id), history.getLast());
            Set<RevId> bases = new HashSet<>();
            for (Success s : mine) {
                int i = history.indexOf(s.rev());
                assertTrue(i >= 0, "success " + s + " is on the winner's history");
                assertEquals(s.base(), history.get(i + 1), "the parent of a success is what its writer read");
                assertTrue(bases.add(s.base()), "two writers succeeded from the same revision: " + s.base());
            }
        }
        Invariants.Report rep = f.checkInvariants(db, 0);
        assertEquals(IDS.size(), rep.changesRows(), "one changes row per document");
        System.out.println("concurrency: " + successes.size() + " successes, " + conflicts.get() + " 409s");
    }

    /** Concurrent creators of one new id: exactly one wins, the rest get 409. */
    @Test
    @Timeout(60)
    void oneCreatorWins() throws Exception {
        try (StoreFixture f = StoreFixture.withFaults(0.04, 99L)) {
            String db = f.newDb("create", 0);
            int docs = 10;
            AtomicInteger[] wins = new AtomicInteger[docs];
            for (int k = 0; k < docs; k++) wins[k] = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    futures.add(ex.submit(() -> {
                        start.await();
                        for (int k = 0; k < docs; k++) {
                            UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit("new-" + k, null, false, body(thread, k))), true).getFirst();
                            if (r.ok()) wins[k].incrementAndGet();
                            else assertEquals(StorageException.Kind.CONFLICT, r.error().kind());
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> fu : futures) fu.get();
            }
            for (int k = 0; k < docs; k++) {
                assertEquals(1, wins[k].get(), "exactly one creator of new-" + k);
                assertEquals(1, f.store.open(db).branches("new-" + k).size());
            }
            assertEquals(docs, f.store.open(db).info().docCount());
            f.checkInvariants(db, 0);
        }
    }

    static ObjectNode body(int thread, int attempt) {
        ObjectNode o = Json.NODES.objectNode();
        o.put("thread", thread);
        o.put("attempt", attempt);
        return o;
    }
}
