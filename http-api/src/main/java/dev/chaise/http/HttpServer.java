package dev.chaise.http;

import dev.chaise.http.config.HttpConfig;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty front end: event loops ({@link Transport}: native epoll, else NIO) parse HTTP and hand each request, with its body as it
 * arrives (bounded by {@code max_http_request_size}, see {@link RequestBody}), to a virtual thread
 * of its own, so handlers may block on storage while the event loops never do. With {@code [chttpd]
 * loop_reads} (on by default) a loop answers reads that never wait itself ({@link HttpPipeline#servesOnLoop}).
 */
public final class HttpServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpServer.class);
    /** CouchDB's max_uri_length is 8000; the request line also holds the method and version. */
    static final int MAX_INITIAL_LINE = 8192;
    static final int MAX_HEADER_SIZE = 64 * 1024;

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final ExecutorService requests;
    /**
     * {@code GET /} and {@code /_up} on platform threads of their own: health checks and load
     * balancers' probes must not queue behind thousands of requests on the virtual threads' two
     * carriers (a liveness probe that times out under load gets a busy server restarted).
     */
    private final ExecutorService liveness;
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicInteger connections = new AtomicInteger();
    private final BodyBudget budget = BodyBudget.ofHeap();
    private final Channel server;
    private final InetSocketAddress address;

    /**
     * Event loops for the connections: half the cores, at least one ({@code -Dio.netty.eventLoopThreads}
     * overrides). They only move bytes and frame HTTP; the requests run on virtual threads, whose
     * carriers take the cores. Netty's default, twice the cores, put four loops beside two carriers
     * on two cores: one loop cut the server CPU per GET by 14-38 % in four A/B rounds, PUTs within
     * noise (docs/benchmarks.md, issue 27). A loop that serves more connections finds more of them
     * ready per wake-up, and is more often awake when an answer is handed to it.
     */
    static int eventLoops() {
        return Integer.getInteger("io.netty.eventLoopThreads", Math.max(1, Runtime.getRuntime().availableProcessors() / 2));
    }

    private HttpServer(HttpConfig config, HttpPipeline pipeline) throws InterruptedException {
        Transport transport = Transport.chosen();
        boss = new MultiThreadIoEventLoopGroup(1, transport.handlers().get());
        workers = new MultiThreadIoEventLoopGroup(eventLoops(), transport.handlers().get());
        requests = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("http-", 0).factory());
        liveness = Executors.newFixedThreadPool(2, Thread.ofPlatform().name("http-liveness-", 0).daemon().factory());
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(transport.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(32 * 1024, 128 * 1024))
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            channels.add(ch);
                            int n = connections.incrementAndGet();
                            ch.closeFuture().addListener(f -> connections.decrementAndGet());
                            ChannelPipeline p = ch.pipeline();
                            if (n > config.maxConnections()) {
                                p.addLast("refuse", new Refuse());
                                return;
                            }
                            p.addLast("idle", new IdleStateHandler(0, 0, config.idleTimeoutSeconds(), TimeUnit.SECONDS));
                            ConnectionHandler handler = new ConnectionHandler(pipeline, requests, liveness, config, budget);
                            p.addLast("head", handler.headWatch());
                            // Only a decoder: answers are written as bytes (Wire), past it.
                            p.addLast("codec", new HttpRequestDecoder(MAX_INITIAL_LINE, MAX_HEADER_SIZE, 64 * 1024));
                            p.addLast("chaise", handler);
                        }
                    });
            server = b.bind(config.bindAddress(), config.port()).sync().channel();
            address = (InetSocketAddress) server.localAddress();
            log.debug("http on {} with the {} transport", address, transport.name());
        } catch (InterruptedException | RuntimeException e) {
            shutdownGroups();
            throw e;
        }
    }

    public static HttpServer start(HttpConfig config, HttpPipeline pipeline) throws InterruptedException {
        return new HttpServer(config, pipeline);
    }

    /** Open connections, including those being refused. */
    public int connections() {
        return connections.get();
    }

    /**
     * A connection past {@code [chttpd] max_connections}: answered at once with 503 and CouchDB's
     * error body (ErrorMapper's, written once), then closed (lingering briefly, so the answer is not
     * lost to a reset). Nothing of its request is parsed, so it costs the server next to nothing.
     */
    private static final class Refuse extends io.netty.channel.ChannelInboundHandlerAdapter {
        private static final String BODY = new String(ErrorMapper.map(new HttpError(503, "service_unavailable", "too many connections"), null)
                .toResponse().body(), java.nio.charset.StandardCharsets.UTF_8);
        private static final byte[] ANSWER = ("HTTP/1.1 503 Service Unavailable\r\nServer: " + Wire.SERVER
                + "\r\nContent-Type: application/json\r\nCache-Control: must-revalidate\r\nConnection: close\r\nContent-Length: " + BODY.length() + "\r\n\r\n" + BODY).getBytes(java.nio.charset.StandardCharsets.US_ASCII);

        @Override
        public void channelActive(io.netty.channel.ChannelHandlerContext ctx) {
            ctx.writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(ANSWER)).addListener(f -> {
                if (f.isSuccess()) Linger.closeAfterAnswer(ctx.channel(), 1 << 20, 5_000);
                else ctx.close();
            });
        }

        @Override
        public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
            io.netty.util.ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    public int port() {
        return address.getPort();
    }

    public InetSocketAddress address() {
        return address;
    }

    /** {@link #close(Duration)} with a five-second bound. */
    @Override
    public void close() {
        close(java.time.Duration.ofSeconds(5));
    }

    /**
     * Stops gracefully: stops accepting connections, lets the requests already running finish
     * (up to {@code drain}; after it they are interrupted), and then closes every connection. A
     * request that arrives meanwhile on an open connection is not started: its connection closes
     * unanswered, so the client knows it was not done. Responses already written are flushed
     * before their connection closes (the close is queued behind them on the connection's loop).
     */
    public void close(java.time.Duration drain) {
        server.close().awaitUninterruptibly();
        liveness.shutdown();
        requests.shutdown();
        try {
            if (!requests.awaitTermination(drain.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("requests still running after {} s; interrupting them", drain.toSeconds());
                requests.shutdownNow();
                requests.awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        channels.close().awaitUninterruptibly();
        shutdownGroups();
    }

    private void shutdownGroups() {
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        log.debug("http server stopped");
    }
}
