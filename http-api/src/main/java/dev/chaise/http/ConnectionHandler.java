package dev.chaise.http;

import dev.chaise.http.config.HttpConfig;
import dev.chaise.threads.NoWaiting;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection. Requests are answered one at a time, in order (pipelined requests wait, and
 * reading pauses), each on a virtual thread, but for bounded reads that never wait
 * ({@link HttpPipeline#servesOnLoop}), answered on the event loop itself. Fields marked "loop" are
 * touched only on the channel's event loop; the rest are guarded by {@link #lock}.
 */
final class ConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);
    private static final int STREAM_BUFFER = 8192;

    private final HttpPipeline pipeline;
    private final ExecutorService requests;
    private final ExecutorService liveness;
    private final HttpConfig config;
    private final BodyBudget budget;

    /** A request as it arrives: its head, its body (perhaps still arriving), or the error that answers it. */
    private record Incoming(HttpRequest head, RequestBody body, boolean streamed, HttpError reject) {}

    private final ArrayDeque<Incoming> queued = new ArrayDeque<>(); // loop
    private Incoming receiving; // loop: the request whose body is arriving
    private Incoming running; // loop
    private boolean busy; // loop
    private boolean rejected; // loop: a request was refused and the connection will close; ignore the rest
    private boolean closing; // loop: the last answer is out and the connection lingers (see Linger)
    private boolean awaitingHead = true; // loop: the next bytes begin a request head
    private ScheduledFuture<?> headTimer; // loop: closes a head that does not complete in time
    private long heads; // loop: request heads decoded so far

    /**
     * Where answers are written: the context in front of the HTTP decoder, so the bytes {@link Wire}
     * made go straight to the socket (there is no HTTP encoder in the pipeline).
     */
    private ChannelHandlerContext out;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition writable = lock.newCondition();
    private volatile boolean open = true;

    ConnectionHandler(HttpPipeline pipeline, ExecutorService requests, ExecutorService liveness, HttpConfig config, BodyBudget budget) {
        this.pipeline = pipeline;
        this.requests = requests;
        this.liveness = liveness;
        this.config = config;
        this.budget = budget;
    }

    /**
     * Bodies up to this size are gathered before the handler starts (most requests: no thread
     * waits on the network); larger ones, and chunked ones, stream to a handler that is already
     * running, so an attachment upload never has to fit in memory.
     */
    static final long AGGREGATE_LIMIT = 1 << 20;

    /** The connection's two ends as requests show them: made once, not per request. */
    private String remote; // set in handlerAdded
    private String local; // set in handlerAdded

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        out = ctx.pipeline().context("codec");
        remote = ctx.channel().remoteAddress() == null ? "" : ctx.channel().remoteAddress().toString();
        local = localAddress(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (rejected) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest h) head(ctx, h);
        if (msg instanceof HttpContent c) content(ctx, c);
        else if (!(msg instanceof HttpRequest)) io.netty.util.ReferenceCountUtil.release(msg);
        updateAutoRead(ctx);
    }

    private void head(ChannelHandlerContext ctx, HttpRequest h) {
        heads++;
        awaitingHead = false;
        if (headTimer != null) {
            headTimer.cancel(false);
            headTimer = null;
        }
        if (h.decoderResult().isFailure()) {
            Throwable cause = h.decoderResult().cause();
            reject(ctx, h, cause instanceof TooLongHttpLineException ? HttpError.uriTooLong()
                    : cause instanceof TooLongFrameException ? new HttpError(431, "bad_request", "Request header fields too large")
                    : HttpError.badRequest("Malformed HTTP request"));
            return;
        }
        long declared = HttpUtil.getContentLength(h, -1L);
        long live = pipeline.settings().maxRequestSize(); // read per request: _config may change it
        long maxRequestSize = live >= 0 ? live : config.maxRequestSize();
        if (declared > maxRequestSize) {
            reject(ctx, h, HttpError.tooLarge());
            return;
        }
        String expect = h.headers().get(HttpHeaderNames.EXPECT);
        boolean expectsContinue = false;
        if (expect != null) {
            if (!expect.equalsIgnoreCase("100-continue")) {
                reject(ctx, h, HttpError.expectationFailed("Expectation " + expect + " is not supported"));
                return;
            }
            expectsContinue = declared != 0;
        }
        // A client that waits for 100 Continue sends no body until the handler asks for it, in
        // its turn: such a request runs at once (no body to gather first), and the 100 goes out
        // when the handler first reads, after every earlier answer, or never if it answers without.
        boolean streamed = expectsContinue || (declared < 0 ? HttpUtil.isTransferEncodingChunked(h) : declared > AGGREGATE_LIMIT);
        Runnable wanted = expectsContinue ? () -> out.writeAndFlush(Unpooled.wrappedBuffer(Wire.CONTINUE)) : () -> {};
        RequestBody body = new RequestBody(maxRequestSize, config.maxBufferedBody(), TimeUnit.SECONDS.toNanos(config.idleTimeoutSeconds()),
                () -> ctx.executor().execute(() -> updateAutoRead(ctx)), wanted, budget, declared);
        Incoming in = new Incoming(h, body, streamed, null);
        receiving = in;
        if (streamed) enqueue(ctx, in);
    }

    private void content(ChannelHandlerContext ctx, HttpContent c) {
        Incoming in = receiving;
        if (in == null) {
            c.release();
            return;
        }
        if (c.decoderResult().isFailure()) {
            c.release();
            receiving = null;
            HttpError malformed = HttpError.badRequest("Malformed HTTP request body");
            if (in.streamed()) {
                in.body().fail(malformed); // the running handler sees it and answers
                rejected = true; // nothing after it can be framed
            } else {
                in.body().close(); // never started: its buffers are released here, and the error answers in its turn
                reject(ctx, in.head(), malformed);
            }
            return;
        }
        in.body().offer(c.content());
        if (c instanceof LastHttpContent) {
            in.body().end();
            receiving = null;
            awaitingHead = true;
            if (!in.streamed()) enqueue(ctx, in);
        }
    }

    /** Answers {@code h} with {@code e} in its turn, then closes: the rest of the stream cannot be trusted. */
    private void reject(ChannelHandlerContext ctx, HttpRequest h, HttpError e) {
        rejected = true;
        receiving = null;
        enqueue(ctx, new Incoming(h, RequestBody.of(new byte[0]), false, e));
    }

    private void enqueue(ChannelHandlerContext ctx, Incoming in) {
        if (busy) {
            queued.add(in);
        } else {
            start(ctx, in);
        }
    }

    /** Reads on only while nothing waits to run and the body arriving is being consumed. */
    private void updateAutoRead(ChannelHandlerContext ctx) {
        if (closing) return; // Linger reads, to discard
        Incoming in = receiving;
        boolean read = !rejected && queued.isEmpty() && (in == null || !in.body().full());
        if (ctx.channel().isActive() && ctx.channel().config().isAutoRead() != read) ctx.channel().config().setAutoRead(read);
    }

    private void start(ChannelHandlerContext ctx, Incoming in) {
        busy = true;
        running = in;
        Request parsed = loopCandidate(in);
        // Answered here, the request costs no virtual thread, no carrier woken and no wake-up of this loop for its answer.
        Router.Match routed = parsed == null ? null : pipeline.servesOnLoop(parsed);
        if (routed != null && answerOnLoop(ctx, in, parsed, routed)) return;
        try {
            (isLivenessCheck(in) ? liveness : requests).execute(() -> run(ctx, in, parsed));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            in.body().close(); // shutting down
            ctx.close();
        }
    }

    /**
     * The request, parsed here (its thread then does not parse it again), if {@code [chttpd]
     * loop_reads} is on and it is a GET or HEAD without a body: one {@link HttpPipeline#servesOnLoop}
     * may answer on this loop. Else null.
     */
    private Request loopCandidate(Incoming in) {
        if (!pipeline.settings().loopReads() || in.reject() != null || in.streamed()) return null;
        HttpMethod m = in.head().method();
        if (!m.equals(HttpMethod.GET) && !m.equals(HttpMethod.HEAD) || HttpUtil.getContentLength(in.head(), 0L) != 0) return null;
        Request req;
        try {
            req = toRequest(in);
        } catch (RuntimeException e) {
            return null; // answered on a virtual thread, as any request whose target is refused
        }
        return req;
    }

    /**
     * Runs {@code req} on the loop, where nothing may wait ({@link NoWaiting}); false if it would
     * have waited (nothing answered, nothing counted), to be run on a virtual thread instead. An
     * answer that is not one buffer (a stream, which may wait for the client) is written from a
     * virtual thread.
     */
    private boolean answerOnLoop(ChannelHandlerContext ctx, Incoming in, Request req, Router.Match routed) {
        long start = System.nanoTime();
        HttpPipeline.Outcome outcome;
        try {
            outcome = NoWaiting.call(() -> pipeline.handle(req, routed));
        } catch (NoWaiting.Deferred wouldWait) {
            return false;
        } catch (Throwable t) {
            outcome = new HttpPipeline.Outcome(null, ErrorMapper.map(t, null).toResponse());
        }
        if (outcome.response() instanceof Response.Full) {
            answer(ctx, in, start, outcome);
        } else {
            HttpPipeline.Outcome streamed = outcome;
            try {
                requests.execute(() -> answer(ctx, in, start, streamed));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                in.body().close(); // shutting down
                ctx.close();
            }
        }
        return true;
    }

    /** {@code GET} or {@code HEAD} of {@code /} or {@code /_up}, with no body: served on the liveness lane. */
    static boolean isLivenessCheck(Incoming in) {
        if (in.reject() != null || in.streamed()) return false;
        HttpMethod m = in.head().method();
        if (!m.equals(HttpMethod.GET) && !m.equals(HttpMethod.HEAD)) return false;
        String uri = in.head().uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        return path.equals("/") || path.equals("/_up");
    }

    /** Back on the event loop after a response is written: the next pipelined request, or read on. */
    private void done(ChannelHandlerContext ctx) {
        busy = false;
        running = null;
        Incoming next = queued.poll();
        if (next != null) start(ctx, next);
        updateAutoRead(ctx);
    }

    // ------------------------------------------------------------------ on the request's virtual thread

    /**
     * Runs a request to its end. Whatever fails, here or in a handler, before or after a write
     * committed, the client gets an answer: the error's, or if even that cannot be written, a
     * closed connection; once a streamed body has begun, a connection closed before its last chunk.
     * {@code parsed} is the request if the loop parsed it already ({@link #loopCandidate}), else null.
     */
    private void run(ChannelHandlerContext ctx, Incoming in, Request parsed) {
        long start = System.nanoTime();
        HttpPipeline.Outcome outcome;
        try {
            outcome = in.reject() != null ? new HttpPipeline.Outcome(null, ErrorMapper.map(in.reject(), null).toResponse())
                    : pipeline.handle(parsed != null ? parsed : toRequest(in));
        } catch (Throwable t) {
            outcome = new HttpPipeline.Outcome(null, ErrorMapper.map(t, null).toResponse());
        }
        answer(ctx, in, start, outcome);
    }

    /** Writes {@code outcome}, on whichever thread ran the request. */
    private void answer(ChannelHandlerContext ctx, Incoming in, long start, HttpPipeline.Outcome outcome) {
        Exchange x = new Exchange(ctx, in, start);
        try {
            x.respond(outcome);
        } catch (Throwable t) {
            x.failed(t);
        } finally {
            in.body().close();
        }
    }

    /** One request's answer as it is written: what went out already decides what a failure can still do. */
    private final class Exchange {
        final ChannelHandlerContext ctx;
        final Incoming in;
        final long start;
        boolean keepAlive;
        /** Something of the answer was handed to the channel: a failure now can only close it. */
        boolean wrote;
        boolean finished;

        Exchange(ChannelHandlerContext ctx, Incoming in, long start) {
            this.ctx = ctx;
            this.in = in;
            this.start = start;
            this.keepAlive = HttpUtil.isKeepAlive(in.head()) && in.reject() == null;
        }

        void respond(HttpPipeline.Outcome outcome) {
            String method = in.head().method().name();
            String uri = in.head().uri();
            Request req = outcome.request();
            boolean head = req != null ? req.isHead() : method.equals("HEAD");
            String user = req == null ? null : HttpPipeline.userOf(req).name();
            String requestId = req == null ? newRequestId() : req.requestId();
            int status = outcome.response().status();
            ChannelFuture last;
            try {
                Response resp = outcome.response();
                if (resp instanceof Response.Streamed s && !head) {
                    Stream out = new Stream(ctx, s, requestId, this);
                    try {
                        s.body().writeTo(out);
                        last = out.finish();
                    } catch (ResponseStream.ClientGoneException gone) {
                        last = null;
                    } catch (Throwable t) {
                        if (wrote) {
                            // Headers are gone; closing mid-chunk tells the client the body is incomplete.
                            log.error("{} {} failed after its response started", method, uri, t);
                            last = null;
                        } else {
                            Response.Full err = ErrorMapper.map(t, req).toResponse();
                            status = err.status();
                            last = writeFull(err, requestId, head);
                        }
                    }
                } else {
                    last = writeFull(resp, requestId, head);
                }
            } catch (ResponseStream.ClientGoneException gone) {
                last = null;
            }
            pipeline.completed(ctx.channel().remoteAddress(), in.head().headers().get(HttpHeaderNames.HOST), method, uri, status,
                    last != null, System.nanoTime() - start, user, requestId);
            finish(last);
        }

        /** The answer for {@code t} if nothing was sent yet, else a closed connection. */
        void failed(Throwable t) {
            if (finished) return;
            try {
                if (!wrote && open) {
                    log.error("{} {} failed while its answer was written", in.head().method(), in.head().uri(), t);
                    keepAlive = false;
                    Response.Full err = ErrorMapper.map(t, null).toResponse();
                    finish(writeFull(err, newRequestId(), in.head().method().name().equals("HEAD")));
                    return;
                }
                log.error("{} {} failed after its answer started", in.head().method(), in.head().uri(), t);
            } catch (Throwable again) {
                log.error("could not answer {} {}", in.head().method(), in.head().uri(), again);
            }
            finished = true;
            ctx.close();
        }

        /** After the last write: the next request, or a close (lingering while the client may still be sending). */
        private void finish(ChannelFuture last) {
            finished = true;
            if (last == null) {
                ctx.close();
                return;
            }
            // A body the handler left unread is still on the wire: the next request cannot be found.
            boolean unread = !in.body().complete();
            if (keepAlive && !unread) {
                // A write's listeners run on the channel's event loop: done() is loop work, with no task of its own.
                last.addListener(f -> {
                    if (f.isSuccess()) done(ctx);
                    else ctx.close();
                });
                return;
            }
            last.addListener(f -> {
                if (!f.isSuccess()) {
                    ctx.close();
                } else if (unread || in.reject() != null) {
                    ctx.executor().execute(() -> {
                        closing = true;
                        Linger.closeAfterAnswer(ctx.channel());
                    });
                } else {
                    ctx.close();
                }
            });
        }

        /** Head and body as one buffer, one write. */
        private ChannelFuture writeFull(Response resp, String requestId, boolean head) {
            byte[] body = resp instanceof Response.Full f ? f.body() : new byte[0];
            // Decided now: a handler may have left its body unread.
            if (!in.body().complete()) keepAlive = false;
            // A HEAD of a streamed response has no length to announce; a 304 says its length too (0), as CouchDB does.
            var answer = Wire.full(ctx.alloc(), resp, body, head, requestId, keepAlive);
            if (!open) {
                answer.release(); // pooled, not left to the collector
                throw new ResponseStream.ClientGoneException();
            }
            wrote = true;
            return out.writeAndFlush(answer);
        }
    }

    private Request toRequest(Incoming in) {
        HttpRequest r = in.head();
        String uri = r.uri();
        String rid = requestId(r.headers().get("X-Couch-Request-ID"));
        if (uri.length() > 8000) throw HttpError.uriTooLong();
        RequestSettings settings = pipeline.settings();
        RequestTarget t = RequestTarget.parse(uri, settings.decodePlusToSpace());
        return new Request(r.method().name(), uri, t.rawPath(), t.path(), t.query(), r.headers(), in.body(), remote, rid, null, Map.of(),
                local, settings);
    }

    /** {@code ip:port} the connection arrived on, as CouchDB writes it in a URL when a request names no Host. */
    private static String localAddress(ChannelHandlerContext ctx) {
        if (ctx.channel().localAddress() instanceof java.net.InetSocketAddress a && a.getAddress() != null) {
            return a.getAddress().getHostAddress() + ":" + a.getPort();
        }
        return String.valueOf(ctx.channel().localAddress());
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

    /** A byte buffer whose array is read in place. */
    private static final class Buffer extends ByteArrayOutputStream {
        byte[] buf() {
            return buf;
        }
    }

    /** The chunked writer: nothing is sent before the first flush, so an early failure can still be a proper error. */
    private final class Stream implements ResponseStream {
        private final ChannelHandlerContext ctx;
        private final Response.Streamed resp;
        private final String requestId;
        private final Exchange exchange;
        private final Buffer buffer = new Buffer();
        boolean started;
        private boolean chunked;

        Stream(ChannelHandlerContext ctx, Response.Streamed resp, String requestId, Exchange exchange) {
            this.ctx = ctx;
            this.resp = resp;
            this.requestId = requestId;
            this.exchange = exchange;
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
                out.flush();
                return;
            }
            out.writeAndFlush(body());
            awaitWritable();
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        private void startIfNeeded() {
            if (started) return;
            if (!exchange.in.body().complete()) exchange.keepAlive = false;
            // A body whose length the handler knows (an attachment) is sent with it, as CouchDB does, not chunked.
            var head = Wire.streamHead(resp, requestId, exchange.keepAlive);
            chunked = Wire.chunked(resp);
            // Only now: headers that failed to build leave the error answer possible.
            started = true;
            exchange.wrote = true;
            out.write(head);
        }

        /** What the buffer holds, framed as a chunk if the body is chunked; the buffer is emptied. */
        private io.netty.buffer.ByteBuf body() {
            io.netty.buffer.ByteBuf b = chunked ? Wire.chunk(buffer.buf(), buffer.size()) : Unpooled.copiedBuffer(buffer.buf(), 0, buffer.size());
            buffer.reset();
            return b;
        }

        ChannelFuture finish() {
            if (!open) throw new ClientGoneException();
            startIfNeeded();
            if (buffer.size() > 0) out.write(body());
            return out.writeAndFlush(chunked ? Unpooled.wrappedBuffer(Wire.LAST_CHUNK) : Unpooled.EMPTY_BUFFER);
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

    /**
     * Sits before the HTTP decoder and times request heads ({@code [chttpd] request_head_timeout}):
     * bytes that leave a head begun but incomplete start the clock, the head's end stops it. A
     * client that sends its head a byte at a time cannot hold the connection; an idle kept-alive
     * connection, with nothing begun, is the idle timeout's.
     */
    ChannelInboundHandlerAdapter headWatch() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext c, Object msg) {
                boolean bytes = msg instanceof io.netty.buffer.ByteBuf b && b.isReadable();
                boolean wasAwaiting = awaitingHead;
                long before = heads;
                c.fireChannelRead(msg);
                if (bytes && wasAwaiting && awaitingHead && heads == before && headTimer == null && !closing
                        && config.requestHeadTimeoutSeconds() > 0) {
                    headTimer = c.executor().schedule(() -> {
                        log.debug("closing a connection whose request head did not complete in {} s", config.requestHeadTimeoutSeconds());
                        c.close();
                    }, config.requestHeadTimeoutSeconds(), TimeUnit.SECONDS);
                }
            }
        };
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        signal();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        open = false;
        if (headTimer != null) headTimer.cancel(false);
        signal();
        ResponseStream.ClientGoneException gone = new ResponseStream.ClientGoneException();
        if (receiving != null) receiving.body().fail(gone);
        if (running != null) running.body().fail(gone);
        Incoming q;
        while ((q = queued.poll()) != null) q.body().close();
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
