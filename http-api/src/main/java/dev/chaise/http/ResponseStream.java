package dev.chaise.http;

import java.nio.charset.StandardCharsets;

/**
 * The writer a {@link Response.StreamBody} gets. Writes are buffered; {@link #flush()} sends what
 * is buffered as one chunk (continuous feeds flush after every line). A full buffer is sent on its
 * own. Sending waits while the client is not reading (the channel is not writable), so a slow
 * client slows the producer instead of filling memory. Once the client has gone away every call
 * throws {@link ClientGoneException}, which the server treats as the end of the request, not as
 * an error.
 */
public interface ResponseStream {
    void write(byte[] bytes);

    default void write(String s) {
        write(s.getBytes(StandardCharsets.UTF_8));
    }

    void flush();

    /** False once the client has disconnected; a producer that waits (longpoll) polls this. */
    boolean isOpen();

    /** Thrown by a write or flush after the client disconnected. */
    final class ClientGoneException extends RuntimeException {
        public ClientGoneException() {
            super("client went away", null, false, false);
        }
    }
}
