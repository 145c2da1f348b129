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
 * Keeps the live write-ahead log's length ahead of what RocksDB has written to it, so that a
 * commit's fdatasync has no change of size to write out.
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
 */
final class WalHeadroom {
    private static final Logger log = LoggerFactory.getLogger(WalHeadroom.class);
    /** How far past the log's written end its length is kept: a crash's recovery reads at most this much of zeros. */
    static final long CHUNK = 64L << 20;
    /** Extend again after this much is written: the log keeps 48-64 MB of headroom, whatever the records' framing adds. */
    static final long STEP = CHUNK / 4;
    /** Look for a new log (a memtable switch starts one) after this much is written: a directory listing, a few hundred PUTs apart. */
    static final long CHECK = 256L << 10;

    private final Path directory;
    private long logNumber = -1;
    private long extendedTo;
    private long sinceExtended;
    private long sinceChecked;
    private boolean failed;

    WalHeadroom(Path directory) {
        this.directory = directory;
    }

    /** The leader wrote this many bytes of WriteBatch to RocksDB. */
    void wrote(long bytes) {
        sinceExtended += bytes;
        sinceChecked += bytes;
    }

    /** Before the leader writes a batch, with none of its writes in flight. Never throws: it only saves time. */
    void ensure() {
        if (failed || (logNumber >= 0 && sinceChecked < CHECK)) return;
        sinceChecked = 0;
        try {
            Path live = liveLog();
            if (live == null) return;
            long number = number(live);
            boolean fresh = number != logNumber;
            if (!fresh && sinceExtended < STEP) return;
            // Opened without CREATE: a log deleted meanwhile is not made again.
            try (FileChannel f = FileChannel.open(live, StandardOpenOption.WRITE)) {
                long length = f.size();
                long target = fresh ? length + CHUNK : extendedTo + sinceExtended;
                // One zero byte at the new end, past every byte RocksDB wrote; only ever longer.
                if (length < target) f.write(ByteBuffer.allocate(1), target - 1);
                extendedTo = Math.max(length, target);
            }
            logNumber = number;
            sinceExtended = 0;
        } catch (NoSuchFileException e) {
            logNumber = -1; // the log went (a switch and its deletion meanwhile): look again next time
        } catch (IOException | RuntimeException e) {
            failed = true; // appends are only slower
            log.warn("Cannot keep the write-ahead log's length ahead of its writes ({}); commits go on, their fsyncs somewhat slower", e.toString());
        }
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
