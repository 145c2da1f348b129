package dev.chaise.http;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection. Requests are answered one at a time, in order (pipelined requests wait, and
 * reading pauses), each on a virtual thread. Fields marked "loop" are touched only on the
 * channel's event loop; the rest are guarded by {@link #lock}.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);
    static final String SERVER = "CouchDB/" + HttpConfig.COUCHDB_VERSION + " (Chaise)";
    private static final int STREAM_BUFFER = 8192;
    /** RFC 7231's IMF-fixdate (the JDK's RFC_1123 formatter drops the day's leading zero). */
    static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", java.util.Locale.US);

    private final HttpPipeline pipeline;
    private final ExecutorService requests;
    private final HttpConfig config;

    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>(); // loop
    private boolean busy; // loop

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition writable = lock.newCondition();
    private volatile boolean open = true;

    ConnectionHandler(HttpPipeline pipeline, ExecutorService requests, HttpConfig config) {
        this.pipeline = pipeline;
        this.requests = requests;
        this.config = config;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest r)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        if (r.decoderResult().isFailure()) {
            Throwable cause = r.decoderResult().cause();
            r.release();
            HttpError e = cause instanceof TooLongHttpLineException ? HttpError.uriTooLong()
                    : cause instanceof TooLongFrameException ? new HttpError(431, "bad_request", "Request header fields too large")
                    : HttpError.badRequest("Malformed HTTP request");
            FullHttpResponse out = errorResponse(e);
            out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (busy) {
            queued.add(r);
            ctx.channel().config().setAutoRead(false);
        } else {
            start(ctx, r);
        }
    }

    private void start(ChannelHandlerContext ctx, FullHttpRequest r) {
        busy = true;
        try {
            requests.execute(() -> run(ctx, r));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            r.release(); // shutting down
            ctx.close();
        }
    }

    /** Back on the event loop after a response is written: the next pipelined request, or read on. */
    private void done(ChannelHandlerContext ctx) {
        busy = false;
        FullHttpRequest next = queued.poll();
        if (next != null) {
            start(ctx, next);
        } else if (ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
    }

    // ------------------------------------------------------------------ on the request's virtual thread

    private void run(ChannelHandlerContext ctx, FullHttpRequest r) {
        long start = System.nanoTime();
        boolean keepAlive = HttpUtil.isKeepAlive(r);
        String method = r.method().name();
        String uri = r.uri();
        HttpPipeline.Outcome outcome;
        try {
            outcome = pipeline.handle(toRequest(ctx, r));
        } catch (RuntimeException e) {
            outcome = new HttpPipeline.Outcome(null, ErrorMapper.map(e, null).toResponse());
        } finally {
            r.release();
        }
        Request req = outcome.request();
        boolean head = req != null ? req.isHead() : method.equals("HEAD");
        String user = req == null ? null : HttpPipeline.userOf(req).name();
        String requestId = req == null ? newRequestId() : req.requestId();
        long[] bytes = {0};
        int status = outcome.response().status();
        ChannelFuture last;
        try {
            Response resp = outcome.response();
            if (resp instanceof Response.Streamed s && !head) {
                Stream out = new Stream(ctx, s, requestId, keepAlive);
                try {
                    s.body().writeTo(out);
                    last = out.finish();
                } catch (ResponseStream.ClientGoneException gone) {
                    last = null;
                } catch (Throwable t) {
                    if (t instanceof VirtualMachineError vme) throw vme;
                    if (out.started) {
                        // Headers are gone; closing mid-chunk tells the client the body is incomplete.
                        log.error("{} {} failed after its response started", method, uri, t);
                        ctx.close();
                        last = null;
                    } else {
                        Response.Full err = ErrorMapper.map(t, req).toResponse();
                        status = err.status();
                        last = writeFull(ctx, err, requestId, keepAlive, head);
                        bytes[0] = err.body().length;
                    }
                }
                if (out.started) {
                    status = s.status();
                    bytes[0] = out.sent;
                }
            } else {
                last = writeFull(ctx, resp, requestId, keepAlive, head);
                bytes[0] = head || !(resp instanceof Response.Full f) ? 0 : f.body().length;
            }
        } catch (ResponseStream.ClientGoneException gone) {
            last = null;
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        AccessLog.log(ctx.channel(), method, uri, status, bytes[0], millis, user);
        if (last == null || !keepAlive) {
            if (last != null) last.addListener(ChannelFutureListener.CLOSE);
            else ctx.close();
            return;
        }
        last.addListener(f -> {
            if (f.isSuccess()) ctx.executor().execute(() -> done(ctx));
            else ctx.close();
        });
    }

    private Request toRequest(ChannelHandlerContext ctx, FullHttpRequest r) {
        String uri = r.uri();
        byte[] body = ByteBufUtil.getBytes(r.content());
        String remote = ctx.channel().remoteAddress() == null ? "" : ctx.channel().remoteAddress().toString();
        String rid = requestId(r.headers().get("X-Couch-Request-ID"));
        if (uri.length() > 8000) throw HttpError.uriTooLong();
        RequestTarget t = RequestTarget.parse(uri, config.decodePlusToSpace());
        return new Request(r.method().name(), uri, t.rawPath(), t.path(), t.query(), r.headers(), body, remote, rid, null, Map.of());
    }

    private ChannelFuture writeFull(ChannelHandlerContext ctx, Response resp, String requestId, boolean keepAlive, boolean head) {
        byte[] body = resp instanceof Response.Full f ? f.body() : new byte[0];
        FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(resp.status()),
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        headers(out.headers(), resp, requestId, keepAlive);
        // A HEAD of a streamed response has no length to announce.
        if (resp instanceof Response.Full && resp.status() != 204 && resp.status() != 304) out.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
        if (!open) throw new ResponseStream.ClientGoneException();
        return ctx.writeAndFlush(out);
    }

    static void headers(HttpHeaders h, Response resp, String requestId, boolean keepAlive) {
        for (Response.Header x : resp.headers()) h.add(x.name(), x.value());
        if (!h.contains(HttpHeaderNames.CACHE_CONTROL)) h.set(HttpHeaderNames.CACHE_CONTROL, "must-revalidate");
        h.set(HttpHeaderNames.SERVER, SERVER);
        h.set(HttpHeaderNames.DATE, HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC)));
        h.set("X-Couch-Request-ID", requestId);
        h.set("X-CouchDB-Body-Time", "0");
        h.set(HttpHeaderNames.CONNECTION, keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
    }

    /** A JSON error response built without a request (decoder failures, 413 from the aggregator). */
    static FullHttpResponse errorResponse(HttpError e) {
        Response.Full r = ErrorMapper.map(e, null).toResponse();
        FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(r.status()), Unpooled.wrappedBuffer(r.body()));
        headers(out.headers(), r, newRequestId(), false);
        out.headers().set(HttpHeaderNames.CONTENT_LENGTH, r.body().length);
        return out;
    }

    /** CouchDB's nonce: the client's X-Couch-Request-ID if sane, else 10 random hex digits. */
    static String requestId(String given) {
        if (given != null && !given.isEmpty() && given.length() <= 36 && given.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '_')) {
            return given;
        }
        return newRequestId();
    }

    static String newRequestId() {
        byte[] b = new byte[5];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The chunked writer: nothing is sent before the first flush, so an early failure can still be a proper error. */
    private final class Stream implements ResponseStream {
        private final ChannelHandlerContext ctx;
        private final Response.Streamed resp;
        private final String requestId;
        private final boolean keepAlive;
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean started;
        long sent;

        Stream(ChannelHandlerContext ctx, Response.Streamed resp, String requestId, boolean keepAlive) {
            this.ctx = ctx;
            this.resp = resp;
            this.requestId = requestId;
            this.keepAlive = keepAlive;
        }

        @Override
        public void write(byte[] bytes) {
            if (!open) throw new ClientGoneException();
            buffer.write(bytes, 0, bytes.length);
            if (buffer.size() >= STREAM_BUFFER) flush();
        }

        @Override
        public void flush() {
            if (!open) throw new ClientGoneException();
            startIfNeeded();
            if (buffer.size() == 0) {
                ctx.flush();
                return;
            }
            byte[] chunk = buffer.toByteArray();
            buffer.reset();
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk)));
            sent += chunk.length;
            awaitWritable();
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        private void startIfNeeded() {
            if (started) return;
            started = true;
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(resp.status()));
            headers(head.headers(), resp, requestId, keepAlive);
            HttpUtil.setTransferEncodingChunked(head, true);
            ctx.write(head);
        }

        ChannelFuture finish() {
            if (!open) throw new ClientGoneException();
            if (buffer.size() > 0 || !started) {
                startIfNeeded();
                if (buffer.size() > 0) {
                    byte[] chunk = buffer.toByteArray();
                    buffer.reset();
                    ctx.write(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk)));
                    sent += chunk.length;
                }
            }
            return ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        }

        /** Waits while the client is not keeping up; a client stuck for the idle timeout is dropped. */
        private void awaitWritable() {
            if (ctx.channel().isWritable()) return;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(config.idleTimeoutSeconds());
            lock.lock();
            try {
                while (open && !ctx.channel().isWritable()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        log.info("closing a connection whose client stopped reading");
                        ctx.close();
                        throw new ClientGoneException();
                    }
                    writable.awaitNanos(left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ClientGoneException();
            } finally {
                lock.unlock();
            }
            if (!open) throw new ClientGoneException();
        }
    }

    // ------------------------------------------------------------------ channel events

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        signal();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        open = false;
        signal();
        FullHttpRequest r;
        while ((r = queued.poll()) != null) r.release();
        ctx.fireChannelInactive();
    }

    private void signal() {
        lock.lock();
        try {
            writable.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        // Idle only counts between requests: a handler may legitimately wait (longpoll) with nothing on the wire.
        if (evt instanceof IdleStateEvent && !busy) ctx.close();
        else ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) log.debug("connection error", cause);
        else log.warn("connection error", cause);
        ctx.close();
    }
}
