package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Bodies read whole share the server's memory budget: past it they wait, and give up with 503, instead of running the heap out. */
class BodyBudgetTest {
    static RequestBody arrived(BodyBudget budget, int size) {
        RequestBody b = new RequestBody(Long.MAX_VALUE, Long.MAX_VALUE, TimeUnit.SECONDS.toNanos(5), () -> {}, () -> {}, budget, size);
        b.offer(Unpooled.wrappedBuffer(new byte[size]));
        b.end();
        return b;
    }

    @Test
    void bodiesWaitForRoomAndReleaseItWhenTheRequestEnds() throws Exception {
        int mb = 1 << 20;
        BodyBudget budget = new BodyBudget(8L * mb, 10_000); // two 1 MB bodies (4 MB each, parsed)
        RequestBody a = arrived(budget, mb);
        RequestBody b = arrived(budget, mb);
        assertEquals(mb, a.bytes().length);
        assertEquals(mb, b.bytes().length);
        assertEquals(0, budget.available());
        RequestBody c = arrived(budget, mb);
        CompletableFuture<byte[]> third = CompletableFuture.supplyAsync(c::bytes);
        Thread.sleep(300);
        assertFalse(third.isDone(), "the third body waits for room");
        a.close();
        assertEquals(mb, third.get(10, TimeUnit.SECONDS).length);
        b.close();
        c.close();
        assertEquals(budget.capacity(), budget.available(), "everything is given back");
    }

    @Test
    void aGrowingBodyNeverWaitsWhileHoldingRoom() throws Exception {
        BodyBudget budget = new BodyBudget(8 << 20, 10_000);
        RequestBody other = arrived(budget, 1 << 20); // holds 4 MB
        other.bytes();
        // No declared length (chunked): it reserves in steps, and past the free room fails at once.
        RequestBody chunked = new RequestBody(Long.MAX_VALUE, Long.MAX_VALUE, TimeUnit.SECONDS.toNanos(5), () -> {}, () -> {}, budget, -1);
        chunked.offer(Unpooled.wrappedBuffer(new byte[2 << 20]));
        chunked.end();
        long t0 = System.nanoTime();
        HttpError e = assertThrows(HttpError.class, chunked::bytes);
        assertEquals(503, e.status());
        assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) < 5, "it did not wait for the 10 s allowed to a first reservation");
        chunked.close();
        other.close();
        assertEquals(budget.capacity(), budget.available());
    }

    @Test
    void gzipBodiesReserveAllTheyMayInflateToFirst() throws Exception {
        BodyBudget budget = new BodyBudget(8 << 20, 10_000);
        RequestBody a = arrived(budget, 10);
        a.readAllInflated(new java.io.ByteArrayInputStream(new byte[100]), 1 << 20); // may inflate to 1 MB: 4 MB held
        RequestBody b = arrived(budget, 10);
        b.bytes();
        CompletableFuture<byte[]> second = CompletableFuture.supplyAsync(() -> b.readAllInflated(new java.io.ByteArrayInputStream(new byte[3 << 19]), 2 << 20));
        Thread.sleep(300);
        assertFalse(second.isDone(), "the second waits (it holds only its 10 bytes) instead of failing");
        a.close();
        assertEquals(3 << 19, second.get(10, TimeUnit.SECONDS).length);
        b.close();
        assertEquals(budget.capacity(), budget.available());
    }

    @Test
    void noRoomInTimeIs503AndABodyOverTheWholeBudgetIsReadAlone() {
        BodyBudget budget = new BodyBudget(1 << 20, 200);
        RequestBody big = arrived(budget, 3 << 20);
        assertArrayEquals(new byte[3 << 20], big.bytes(), "bigger than the budget: it takes all of it");
        HttpError e = assertThrows(HttpError.class, () -> arrived(budget, 10).bytes());
        assertEquals(503, e.status());
        assertEquals("service_unavailable", e.error());
        big.close();
        assertEquals(10, arrived(budget, 10).bytes().length);
    }
}
