package dev.chaise.http;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line per request on the logger {@code dev.chaise.http.access}, in CouchDB's access-log shape:
 * {@code NODE <THREAD> REQUEST-ID HOST PEER USER METHOD PATH CODE STATUS MILLISECONDS}, where
 * STATUS is {@code ok}, {@code error} (4xx, 5xx) or {@code aborted} (the client went away). The
 * server's logback.xml prefixes it with {@code [notice]} and the time, as CouchDB's log does.
 * {@code [chaise] access_log = false} turns it off.
 */
final class AccessLog {
    private static final Logger log = LoggerFactory.getLogger("dev.chaise.http.access");

    private AccessLog() {}

    static void log(String node, SocketAddress remote, String host, String method, String uri, int status, boolean sent, long millis,
                    String user, String requestId) {
        if (!log.isInfoEnabled()) return;
        String peer = remote instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : String.valueOf(remote);
        String outcome = !sent ? "aborted" : status >= 400 ? "error" : "ok";
        log.info("{} <{}> {} {} {} {} {} {} {} {} {}", node, Thread.currentThread().getName(), requestId, host == null ? "undefined" : host,
                peer, user == null ? "undefined" : user, method, uri, status, outcome, millis);
    }
}
