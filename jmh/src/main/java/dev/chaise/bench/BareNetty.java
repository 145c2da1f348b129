package dev.chaise.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import dev.chaise.http.Transport;
import java.nio.charset.StandardCharsets;

/**
 * The yardstick of issue 27's {@code wrk} target: a bare Netty HTTP server, with the version and
 * transport Chaise uses ({@link Transport#chosen()}: native epoll where it loads, NIO with
 * {@code -Dchaise.transport=nio}; {@code HttpServerCodec}), that answers every request with a fixed
 * small JSON body and keeps the connection alive. Nothing else runs in it (no routing, no
 * authentication, no hand-off to another thread), so its rate is what this machine's kernel and
 * Netty allow; Chaise is measured against it with the same {@code wrk} command in one sitting.
 *
 * <pre>java [-Dchaise.transport=nio] -cp jmh/target/benchmarks.jar dev.chaise.bench.BareNetty [port, 18099] [event loops, 1]</pre>
 *
 * One event loop by default, as Chaise has on two cores ({@code HttpServer.eventLoops}).
 */
public final class BareNetty {
    /** About the size of a small document GET's answer. */
    private static final byte[] BODY = "{\"_id\":\"doc-1\",\"_rev\":\"1-967a00dff5e02add41819138abb3284d\",\"value\":42}\n"
            .getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws InterruptedException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 18099;
        int loops = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        Transport transport = Transport.chosen();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, transport.handlers().get());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(loops, transport.handlers().get());
        try {
            new ServerBootstrap().group(boss, workers).channel(transport.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new Answer());
                        }
                    })
                    .bind("127.0.0.1", port).sync();
            System.out.println("bare Netty on http://127.0.0.1:" + port + "/ with " + loops + " event loop(s)");
            boss.terminationFuture().sync();
        } finally {
            workers.shutdownGracefully();
            boss.shutdownGracefully();
        }
    }

    /** Answers at the end of each request, in order, from the event loop. */
    private static final class Answer extends SimpleChannelInboundHandler<HttpObject> {
        private boolean keepAlive;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg instanceof io.netty.handler.codec.http.HttpRequest r) keepAlive = HttpUtil.isKeepAlive(r);
            if (!(msg instanceof LastHttpContent)) return;
            ByteBuf body = Unpooled.wrappedBuffer(BODY);
            FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            out.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, BODY.length)
                    .set(HttpHeaderNames.CONNECTION, keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
            var f = ctx.writeAndFlush(out);
            if (!keepAlive) f.addListener(io.netty.channel.ChannelFutureListener.CLOSE);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // wrk resets its connections at the end
        }
    }
}
