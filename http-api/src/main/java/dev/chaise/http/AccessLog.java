package dev.chaise.http;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One line per request on {@code dev.chaise.http.access}: peer, user, method, path, status, bytes, milliseconds. */
final class AccessLog {
    private static final Logger log = LoggerFactory.getLogger("dev.chaise.http.access");

    private AccessLog() {}

    static void log(Channel ch, String method, String uri, int status, long bytes, long millis, String user) {
        if (!log.isInfoEnabled()) return;
        String peer = ch.remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : String.valueOf(ch.remoteAddress());
        log.info("{} {} {} {} {} {} {}ms", peer, user == null ? "undefined" : user, method, uri, status, bytes, millis);
    }
}
