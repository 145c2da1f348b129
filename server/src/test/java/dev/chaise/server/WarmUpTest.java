package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WarmUpTest {
    @Test
    void sendsThePlanThroughARealServerThenClosesIt() throws Exception {
        AtomicInteger steps = new AtomicInteger();
        // 3,810 documents: 700 bulk requests of 4 (the first 2,800), then 500, 500 and 10; a 2xx for every request, or it throws.
        WarmUp.Result r = WarmUp.run(new WarmUp.Plan(3_810, 31), steps::incrementAndGet);
        assertEquals(3_810, r.docs());
        assertEquals(31, r.requests());
        assertEquals(1 + 700 + 3 + 1 + WarmUp.VIEW_BUILDS * 2 + 1 + 31, steps.get(),
                "PUT db, 703 _bulk_docs, _index, each build's design document with the query that builds it, a grouped query, then the small "
                        + "requests; each after the pause hook");
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), r.port()).close(),
                "the throwaway server is gone when the warm-up returns");
    }

    @Test
    void eachViewBuildsMapsDifferSoEachGetsAnIndexOfItsOwn() throws Exception {
        // Equal maps would share a signature, and so an index: the later queries would build nothing.
        ObjectMapper json = new ObjectMapper();
        Set<String> maps = new HashSet<>();
        for (int k = 0; k < WarmUp.VIEW_BUILDS; k++) {
            var views = json.readTree(WarmUp.design(k)).get("views");
            assertTrue(maps.add(views.get("by_type").get("map").asText()), "by_type's map of build " + k + " is new");
            assertTrue(maps.add(views.get("scores").get("map").asText()), "scores' map of build " + k + " is new");
        }
    }

    @Test
    void writesPutsEveryDocumentThenClosesItsServer() throws Exception {
        AtomicInteger steps = new AtomicInteger();
        // 203 documents over four connections: 51, 51, 51 and 50; each PUT must answer 2xx, or it throws.
        WarmUp.Result r = WarmUp.writes(203, steps::incrementAndGet);
        assertEquals(203, r.docs());
        assertEquals(204, r.requests());
        assertEquals(1 + 203, steps.get(), "PUT db, then one PUT per document; each after the pause hook");
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getLoopbackAddress(), r.port()).close(),
                "the throwaway server is gone when the warm-up returns");
    }

    @Test
    void theCompilersGoQuietInAnIdleVmAndAZeroWaitGivesUp() throws InterruptedException {
        assertFalse(WarmUp.awaitQuietCompiler(Duration.ZERO), "no time to watch: not known to be quiet");
        assertTrue(WarmUp.awaitQuietCompiler(Duration.ofSeconds(60)), "a test JVM doing nothing stops compiling");
    }

    @Test
    void settlingTheHeapCollectsAndLeavesTheFreeRatioAsItWas() {
        HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        String ratio = vm.getVMOption(WarmUp.MAX_HEAP_FREE_RATIO).getValue();
        long before = collections();
        WarmUp.settleHeap();
        assertTrue(collections() > before, "a collection ran");
        assertEquals(ratio, vm.getVMOption(WarmUp.MAX_HEAP_FREE_RATIO).getValue(), "the flag is set back");
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) n += Math.max(0, gc.getCollectionCount());
        return n;
    }

    @Test
    void withoutDocumentsTheSmallRequestsStillAnswer() throws IOException, InterruptedException {
        // No documents: the reads are of the database itself, the queries find nothing; all must be 2xx.
        WarmUp.Result r = WarmUp.run(new WarmUp.Plan(0, 9), () -> { });
        assertEquals(9, r.requests());
    }
}
