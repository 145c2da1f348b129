package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A body read whole: the bytes as they arrived in the decoder's pieces, whether its length was declared or not. */
class RequestBodyTest {
    private static RequestBody body(long declared, String... pieces) {
        RequestBody b = new RequestBody(Long.MAX_VALUE, Long.MAX_VALUE, TimeUnit.SECONDS.toNanos(5), () -> {}, () -> {}, null, declared);
        for (String p : pieces) b.offer(Unpooled.wrappedBuffer(p.getBytes(StandardCharsets.UTF_8)));
        b.end();
        return b;
    }

    @Test
    void aDeclaredLengthIsReadIntoOneArrayAcrossPieces() {
        String whole = "{\"docs\":[" + "{\"a\":1},".repeat(20_000) + "{}]}";
        int third = whole.length() / 3;
        RequestBody b = body(whole.length(), whole.substring(0, third), whole.substring(third, 2 * third), whole.substring(2 * third));
        byte[] bytes = b.bytes();
        assertArrayEquals(whole.getBytes(StandardCharsets.UTF_8), bytes);
        assertSame(bytes, b.bytes(), "read once, then kept");
    }

    @Test
    void aBodyThatEndsShortOfItsDeclaredLengthIsWhatArrived() {
        assertArrayEquals("{\"a\"".getBytes(StandardCharsets.UTF_8), body(10, "{\"a", "\"").bytes());
    }

    @Test
    void aBodyOfUnknownLengthIsReadWhole() {
        String whole = "x".repeat(100_000);
        assertArrayEquals(whole.getBytes(StandardCharsets.UTF_8), body(-1, whole.substring(0, 40_000), whole.substring(40_000)).bytes());
    }
}
