package dev.chaise.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void aPathIsOneMeterWhoeverAsks() {
        Stats s = new Stats();
        Counter a = s.counter("couchdb.x", "x");
        Counter b = s.counter("couchdb.x", "asked again");
        assertSame(a, b);
        a.increment();
        b.add(2);
        assertEquals(3, a.value());
        s.counter("couchdb.read", null, "kept elsewhere", () -> 7);
        s.gauge("couchdb.g", "g", () -> 4);
        assertEquals(7, ((Counter) s.get("couchdb.read")).value());
        assertEquals(List.of("couchdb.g", "couchdb.read", "couchdb.x"), s.all().stream().map(Stats.Metric::path).toList(), "in path order");
    }

    @Test
    void bucketsHoldTheirValuesWithinAnEighth() {
        for (double v : new double[] {0.0005, 0.001, 0.0015, 0.7, 1, 1.1, 2.9, 50, 99, 1234.5, 1e6}) {
            int b = Histogram.bucket(v);
            double upper = Histogram.upper(b);
            assertTrue(upper > v && (v < 0.001 || upper <= v * 1.125), v + " in bucket " + b + " below " + upper);
            assertTrue(b == 0 || Histogram.upper(b - 1) <= v, v + " belongs to no lower bucket");
        }
    }

    @Test
    void aHistogramForgetsWhatIsOlderThanTwoWindows() throws InterruptedException {
        Stats s = new Stats(); // a 10 s window
        Histogram h = s.histogram("couchdb.h", "h");
        h.record(3);
        h.record(5);
        Histogram.Snapshot now = h.snapshot();
        assertEquals(2, now.n());
        assertEquals(3, now.min());
        assertEquals(5, now.max());
        assertEquals(4, now.mean());
        assertEquals(2, now.variance());
        s.window(Duration.ofMillis(50));
        h.record(8);
        assertEquals(8, h.snapshot().max(), "what the 10 s windows held is older than two of 50 ms");
        Thread.sleep(160); // more than two windows
        assertEquals(0, h.snapshot().n());
    }
}
