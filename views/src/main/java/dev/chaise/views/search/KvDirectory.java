package dev.chaise.views.search;

import dev.chaise.kv.KeyValue;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.store.BaseDirectory;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.SingleInstanceLockFactory;

/**
 * A Lucene {@link org.apache.lucene.store.Directory} whose files live in the KV under one
 * index's subspace ({@link SearchSubspace}): an entry per file and its bytes in blocks.
 *
 * <p>Every operation is its own short transaction, far inside FDB's limits: an output writes
 * its full blocks {@link #FLUSH_BYTES} at a time and its entry's length when closed; a delete
 * clears the entry and the blocks in one transaction; a rename moves the entry in one. Lucene's
 * commit is that rename of {@code pending_segments_N} to {@code segments_N}, so a commit point
 * (and the update seq recorded in it) appears atomically, and a crash leaves at most files no
 * commit names, which the next IndexWriter deletes as it opens. An output's entry is written
 * when it is created, so such a file is listed and can be deleted, blocks and all.
 *
 * <p>{@code sync} has nothing to do: a closed output's bytes are committed. The write lock is
 * per instance; one instance serves an index in this process, and the job queue keeps builds of
 * an index on one server at a time.
 */
public final class KvDirectory extends BaseDirectory {
    /** Bytes of full blocks an output writes per transaction: a tenth of FDB's 10 MB. */
    static final int FLUSH_BYTES = 1024 * 1024;
    /** Blocks a read miss fetches at once: files are mostly read forward. */
    static final int READ_AHEAD = 4;

    private final Database db;
    private final String sig;
    private final BlockCache cache;
    private final AtomicLong tempCounter = new AtomicLong();

    public KvDirectory(Database db, String sig, BlockCache cache) {
        super(new SingleInstanceLockFactory());
        this.db = db;
        this.sig = sig;
        this.cache = cache;
    }

    String sig() {
        return sig;
    }

    @Override
    public String[] listAll() {
        ensureOpen();
        return db.read(r -> {
            byte[][] range = SearchSubspace.files(r.handle(), sig);
            List<String> names = new ArrayList<>();
            for (KeyValue kv : r.tx().getRangeAsList(range[0], range[1], 0, false)) names.add(SearchSubspace.fileName(r.handle(), kv.key()));
            return names.stream().sorted().toArray(String[]::new);
        });
    }

    /** Bytes of every file: {@code disk_size}. */
    public long totalBytes() {
        return db.read(r -> {
            byte[][] range = SearchSubspace.files(r.handle(), sig);
            long n = 0;
            for (KeyValue kv : r.tx().getRangeAsList(range[0], range[1], 0, false)) n += Math.max(0, SearchSubspace.FileEntry.decode(kv.value()).length());
            return n;
        });
    }

    private SearchSubspace.FileEntry entry(String name) throws NoSuchFileException {
        SearchSubspace.FileEntry e = db.read(r -> {
            byte[] v = r.tx().get(SearchSubspace.file(r.handle(), sig, name));
            return v == null ? null : SearchSubspace.FileEntry.decode(v);
        });
        if (e == null) throw new NoSuchFileException(name);
        return e;
    }

    @Override
    public void deleteFile(String name) throws IOException {
        ensureOpen();
        boolean found = db.subspaces().run((tx, h) -> {
            byte[] key = SearchSubspace.file(h, sig, name);
            byte[] v = tx.get(key);
            if (v == null) return false;
            byte[][] blocks = SearchSubspace.blocks(h, sig, SearchSubspace.FileEntry.decode(v).id());
            tx.clear(blocks[0], blocks[1]);
            tx.clear(key);
            return true;
        });
        if (!found) throw new NoSuchFileException(name);
    }

    @Override
    public long fileLength(String name) throws IOException {
        ensureOpen();
        return Math.max(0, entry(name).length());
    }

    @Override
    public IndexOutput createOutput(String name, IOContext context) throws IOException {
        ensureOpen();
        long id = ThreadLocalRandom.current().nextLong();
        boolean created = db.subspaces().run((tx, h) -> {
            byte[] key = SearchSubspace.file(h, sig, name);
            if (tx.get(key) != null) return false;
            tx.set(key, new SearchSubspace.FileEntry(id, -1).encode());
            return true;
        });
        if (!created) throw new FileAlreadyExistsException(name);
        return new KvIndexOutput(this, name, id);
    }

    @Override
    public IndexOutput createTempOutput(String prefix, String suffix, IOContext context) throws IOException {
        while (true) {
            try {
                return createOutput(getTempFileName(prefix, suffix, tempCounter.getAndIncrement()), context);
            } catch (FileAlreadyExistsException e) {
                // left by an earlier process: take the next number
            }
        }
    }

    @Override
    public void sync(Collection<String> names) {
        ensureOpen(); // a closed output is committed already
    }

    @Override
    public void syncMetaData() {
        ensureOpen();
    }

    @Override
    public void rename(String source, String dest) throws IOException {
        ensureOpen();
        boolean found = db.subspaces().run((tx, h) -> {
            byte[] from = SearchSubspace.file(h, sig, source);
            byte[] v = tx.get(from);
            if (v == null) return false;
            byte[] to = SearchSubspace.file(h, sig, dest);
            byte[] old = tx.get(to);
            if (old != null) {
                byte[][] blocks = SearchSubspace.blocks(h, sig, SearchSubspace.FileEntry.decode(old).id());
                tx.clear(blocks[0], blocks[1]);
            }
            tx.set(to, v);
            tx.clear(from);
            return true;
        });
        if (!found) throw new NoSuchFileException(source);
    }

    @Override
    public IndexInput openInput(String name, IOContext context) throws IOException {
        ensureOpen();
        SearchSubspace.FileEntry e = entry(name);
        if (e.length() < 0) throw new FileNotFoundException(name + " is still being written");
        return new KvIndexInput("KvIndexInput(" + name + ")", this, e.id(), 0, e.length());
    }

    @Override
    public Set<String> getPendingDeletions() {
        return Set.of();
    }

    @Override
    public void close() {
        isOpen = false;
    }

    /** A block of a file: from the cache, else read with the few after it in one range. */
    byte[] block(long fileId, long blockNo, long lastBlock) {
        long dbId = db.handle().id();
        BlockCache.Key k = new BlockCache.Key(dbId, fileId, blockNo);
        byte[] b = cache.get(k);
        if (b != null) return b;
        long end = Math.min(lastBlock + 1, blockNo + READ_AHEAD);
        List<KeyValue> kvs = db.read(r -> r.tx().getRangeAsList(SearchSubspace.block(r.handle(), sig, fileId, blockNo),
                SearchSubspace.block(r.handle(), sig, fileId, end), 0, false));
        byte[] wanted = null;
        DbHandle h = db.handle();
        for (KeyValue kv : kvs) {
            long n = SearchSubspace.blockNo(h, kv.key());
            cache.put(new BlockCache.Key(dbId, fileId, n), kv.value());
            if (n == blockNo) wanted = kv.value();
        }
        if (wanted == null) throw new IllegalStateException("block " + blockNo + " of file " + fileId + " is missing");
        return wanted;
    }

    /** One transaction of an output: its full blocks from {@code firstBlock}, and on close its entry's length. */
    void writeBlocks(String name, long fileId, long firstBlock, List<byte[]> blocks, long closedLength) {
        db.subspaces().run((tx, h) -> {
            for (int i = 0; i < blocks.size(); i++) tx.set(SearchSubspace.block(h, sig, fileId, firstBlock + i), blocks.get(i));
            if (closedLength >= 0) tx.set(SearchSubspace.file(h, sig, name), new SearchSubspace.FileEntry(fileId, closedLength).encode());
            return null;
        });
        long dbId = db.handle().id();
        for (int i = 0; i < blocks.size(); i++) cache.put(new BlockCache.Key(dbId, fileId, firstBlock + i), blocks.get(i));
    }

    @Override
    public String toString() {
        return "KvDirectory(" + db.name() + ", " + sig + ")";
    }
}
