package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
