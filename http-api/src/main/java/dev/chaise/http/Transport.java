package dev.chaise.http;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.util.function.Supplier;

/**
 * The socket transport of the event loops: Linux's native epoll where its library loads (x86-64
 * Linux), else the JDK's NIO (other platforms, or {@code -Dchaise.transport=nio}). Native epoll
 * skips the JDK selector's layers (its key sets, its locks, a pipe-like wake-up): see
 * docs/benchmarks.md, issue 27, for what it saves per request.
 */
public record Transport(String name, Supplier<IoHandlerFactory> handlers, Class<? extends ServerChannel> serverChannel) {
    public static final Transport NIO = new Transport("nio", NioIoHandler::newFactory, NioServerSocketChannel.class);
    public static final Transport EPOLL = new Transport("epoll", EpollIoHandler::newFactory, EpollServerSocketChannel.class);

    /** {@code -Dchaise.transport} (nio or epoll) if set, else epoll when it is available. */
    public static Transport chosen() {
        String asked = System.getProperty("chaise.transport", "");
        if (asked.equals("nio")) return NIO;
        return Epoll.isAvailable() ? EPOLL : NIO;
    }
}
