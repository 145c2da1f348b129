package dev.chaise.kv.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the live write-ahead log's length ahead of what RocksDB has written to it, and the part
 * just ahead of its writes written with zeros, so that a commit's fdatasync has neither a change
 * of size nor a block allocation to write out.
 *
 * <p>RocksDB appends each batch to the log, and an append moves the file's size: the fsync then
 * writes the inode as well as the data, one more round trip to the disk (ext4 here: 116-119 us a
 * write and fdatasync appending, 79-82 us writing inside the file's length, 56 against 37-40 us of
 * CPU; src-it/bench/fsync-probe.py, docs/benchmarks.md "the WAL's length"). A recycled log is written inside its old length,
 * but RocksDB recycles only after a flush, and after a restart it starts a new log: a store's
 * first 256 MB of writes (its first memtable) appended.
 *
 * <p>So the leader, which alone writes, makes the live log sparse-longer than RocksDB's writes
 * before they get there: the log is extended {@link #CHUNK} past its length when first seen, and
 * again each time about a quarter of that is written. Why it is safe: RocksDB writes the log at
 * its own file offset, which the length does not move; the zero byte that lengthens it goes at or
 * past the file's end, read just before while none of RocksDB's writes is in flight, so it never
 * lands on a record (a later record overwrites it); recovery reads a zeroed tail as the end of
 * the log (the records RocksDB's preallocating environments leave); and a closed log is cut back
 * to what was written. A batch that writes past the headroom before the next look only appends.
 *
 * <p>Inside the length, a write into a hole still allocates a block when it is written back, and
 * the fsync then writes the allocation (the inode's extents, the block bitmap) with the data: a
 * commit that fills a few KB of the log paid it on almost every fsync (134-142 us against 88-98
 * writing over blocks written before, 3.6 KB a commit, fsync-probe.py). So while the log takes
 * small commits, the leader also writes zeros over the {@link #FILL_AHEAD} past RocksDB's write
 * position, read from its file descriptor's offset (Linux's {@code /proc/self/fdinfo}; elsewhere
 * nothing is filled). The next commit's fsync writes them out with its own data, and the commits
 * after it overwrite allocated blocks. The zeros too go only past RocksDB's position, read while
 * none of its writes is in flight.
 */
final class WalHeadroom {
    private static final Logger log = LoggerFactory.getLogger(WalHeadroom.class);
    /** How far past the log's written end its length is kept: a crash's recovery reads at most this much of zeros. */
    static final long CHUNK = 64L << 20;
    /** Extend again after this much is written: the log keeps 48-64 MB of headroom, whatever the records' framing adds. */
    static final long STEP = CHUNK / 4;
    /** Look for a new log (a memtable switch starts one) after this much is written: a directory listing, a few hundred PUTs apart. */
    static final long CHECK = 256L << 10;
    /** How far past RocksDB's write position the log is kept written with zeros while it takes small commits. */
    static final long FILL_AHEAD = 1L << 20;
    /** A write this big is a bulk write's: its own fsync carries enough data that an allocation adds little, so bulk loads fill nothing. */
    static final long SMALL_WRITE = 64L << 10;
    private static final int PAGE = 4096;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect((int) FILL_AHEAD).asReadOnlyBuffer();
    private static final Path PROC_FDS = Path.of("/proc/self/fd");

    private final Path directory;
    private long logNumber = -1;
    private long extendedTo;
    private long sinceExtended;
    private long sinceChecked;
    /** Of {@link #sinceChecked}, the bytes written by small writes. */
    private long smallSinceChecked;
    /** Where the zeros written so far end in the live log. */
    private long filledTo;
    /** RocksDB's file descriptor for the live log, as last found, or -1. */
    private int rocksFd = -1;
    private boolean failed;

    WalHeadroom(Path directory) {
        this.directory = directory;
    }

    /** The leader wrote this many bytes of WriteBatch to RocksDB. */
    void wrote(long bytes) {
        sinceExtended += bytes;
        sinceChecked += bytes;
        if (bytes < SMALL_WRITE) smallSinceChecked += bytes;
    }

    /** Before the leader writes a batch, with none of its writes in flight. Never throws: it only saves time. */
    void ensure() {
        if (failed || (logNumber >= 0 && sinceChecked < CHECK)) return;
        boolean small = logNumber < 0 || 2 * smallSinceChecked >= sinceChecked;
        sinceChecked = 0;
        smallSinceChecked = 0;
        try {
            Path live = liveLog();
            if (live == null) return;
            long number = number(live);
            boolean fresh = number != logNumber;
            if (fresh) {
                rocksFd = -1;
                filledTo = 0;
            }
            // Read before this opens the log too: RocksDB's descriptor is then the only one on it.
            long position = small ? rocksPosition(live) : -1;
            if (!fresh && sinceExtended < STEP && position < 0) return;
            // Opened without CREATE: a log deleted meanwhile is not made again.
            try (FileChannel f = FileChannel.open(live, StandardOpenOption.WRITE)) {
                long length = f.size();
                if (position >= 0) fill(f, position);
                long target = fresh ? length + CHUNK : extendedTo + sinceExtended;
                if (fresh || sinceExtended >= STEP) {
                    // One zero byte at the new end, past every byte RocksDB wrote; only ever longer.
                    if (f.size() < target) f.write(ByteBuffer.allocate(1), target - 1);
                    extendedTo = Math.max(length, target);
                    sinceExtended = 0;
                }
            }
            logNumber = number;
        } catch (NoSuchFileException e) {
            logNumber = -1; // the log went (a switch and its deletion meanwhile): look again next time
        } catch (IOException | RuntimeException e) {
            failed = true; // appends are only slower
            log.warn("Cannot keep the write-ahead log's length ahead of its writes ({}); commits go on, their fsyncs somewhat slower", e.toString());
        }
    }

    /** Zeros from a page past RocksDB's {@code position} to {@link #FILL_AHEAD} past it, over what is not filled yet. */
    private void fill(FileChannel f, long position) throws IOException {
        long from = roundUp(Math.max(filledTo, position + 1));
        long to = roundUp(position + FILL_AHEAD);
        for (long at = from; at < to; ) {
            ByteBuffer z = ZEROS.duplicate().limit((int) Math.min(ZEROS.capacity(), to - at));
            at += f.write(z, at);
        }
        filledTo = Math.max(filledTo, to);
    }

    private static long roundUp(long offset) {
        return (offset + PAGE - 1) / PAGE * PAGE;
    }

    /**
     * RocksDB's write position in {@code live}: the offset of its file descriptor, which its
     * appends move (Linux's {@code /proc/self/fdinfo}), the largest if several are open on it; -1
     * if none can be read.
     */
    private long rocksPosition(Path live) {
        try {
            Path real = live.toRealPath();
            if (rocksFd >= 0 && real.equals(link(rocksFd))) return offset(rocksFd);
            rocksFd = -1;
            long best = -1;
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(PROC_FDS)) {
                for (Path p : fds) {
                    int fd;
                    try {
                        fd = Integer.parseInt(p.getFileName().toString());
                        if (!real.equals(link(fd))) continue;
                        long at = offset(fd);
                        if (at > best) {
                            best = at;
                            rocksFd = fd;
                        }
                    } catch (NumberFormatException | IOException e) {
                        // closed while listed, or not a descriptor: not RocksDB's log
                    }
                }
            }
            return best;
        } catch (IOException | RuntimeException e) {
            return -1; // no /proc: nothing is filled
        }
    }

    private static Path link(int fd) throws IOException {
        return Files.readSymbolicLink(PROC_FDS.resolve(Integer.toString(fd)));
    }

    /** A descriptor's file offset: fdinfo's first line, {@code pos:\t<offset>}. */
    private static long offset(int fd) throws IOException {
        String info = Files.readString(Path.of("/proc/self/fdinfo", Integer.toString(fd)));
        int start = info.indexOf("pos:");
        if (start < 0) throw new IOException("no pos in fdinfo");
        int end = info.indexOf('\n', start);
        return Long.parseLong(info.substring(start + 4, end < 0 ? info.length() : end).trim());
    }

    /** RocksDB's write position in the live log, -1 if unknown (for tests; only while no write is in flight). */
    long rocksPosition() throws IOException {
        Path live = liveLog();
        return live == null ? -1 : rocksPosition(live);
    }

    /** The log RocksDB writes now: a new log (fresh or recycled) always takes a higher file number than every log before it. */
    private Path liveLog() throws IOException {
        Path best = null;
        long bestNumber = -1;
        try (DirectoryStream<Path> logs = Files.newDirectoryStream(directory, "*.log")) {
            for (Path p : logs) {
                long n = number(p);
                if (n > bestNumber) {
                    bestNumber = n;
                    best = p;
                }
            }
        }
        return best;
    }

    private static long number(Path log) {
        String name = log.getFileName().toString();
        try {
            return Long.parseLong(name.substring(0, name.length() - ".log".length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
