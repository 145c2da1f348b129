package dev.chaise.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A lingering close, for a connection answered while its client may still be sending (a body the
 * handler did not read, a request refused): the answer is followed by a FIN, and what the client
 * still sends is read and thrown away, up to a bound, before the socket closes. Closing at once
 * with unread bytes makes the kernel send a reset, which can destroy the answer before the client
 * reads it; a client that writes its whole request before reading would see only the reset.
 */
final class Linger extends ChannelInboundHandlerAdapter {
    /** What a lingering connection may still send, and for how long, before it is closed anyway. */
    static final long MAX_BYTES = 64L << 20;
    static final long MAX_MILLIS = 30_000;

    private final long maxBytes;
    private final long maxMillis;
    private long discarded;
    private ScheduledFuture<?> timer;

    private Linger(long maxBytes, long maxMillis) {
        this.maxBytes = maxBytes;
        this.maxMillis = maxMillis;
    }

    /** Call on the channel's event loop, once the answer is written. */
    static void closeAfterAnswer(Channel ch) {
        closeAfterAnswer(ch, MAX_BYTES, MAX_MILLIS);
    }

    static void closeAfterAnswer(Channel ch, long maxBytes, long maxMillis) {
        if (!ch.isActive() || ch.pipeline().get(Linger.class) != null) return;
        ch.pipeline().addFirst("linger", new Linger(maxBytes, maxMillis));
        if (ch instanceof DuplexChannel d) d.shutdownOutput();
        else ch.close();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timer = ctx.executor().schedule(() -> {
            ctx.close();
        }, maxMillis, TimeUnit.MILLISECONDS);
        ctx.channel().config().setAutoRead(true);
        ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) discarded += b.readableBytes();
        ReferenceCountUtil.release(msg);
        if (discarded > maxBytes) ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (timer != null) timer.cancel(false);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // most likely the reset of a client that gave up: nothing to report
    }
}
