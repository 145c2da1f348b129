package dev.chaise.views.search;

import static dev.chaise.storage.KeySpace.Db.SEARCH;
import static dev.chaise.storage.KeySpace.Search.BLOCKS;
import static dev.chaise.storage.KeySpace.Search.FILES;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.storage.DbHandle;

/**
 * Nouveau's indexes of one database, each a Lucene directory kept in the KV.
 *
 * <pre>
 * (1, DbId, 11 SEARCH, Sig)
 * ├── 0 FILES, FileName = (FileId, Length)      Length -1 while the file is being written
 * └── 1 BLOCKS, FileId, BlockNo = bytes         the file's bytes in {@link #BLOCK_SIZE} blocks (the last one shorter)
 * </pre>
 *
 * The tags are {@link dev.chaise.storage.KeySpace}'s. Sig comes first, so {@code _nouveau_cleanup}
 * drops an index with one range clear. A FileId is random: a rename rewrites one FILES entry and
 * moves no block, and a name written again (Lucene never does) could not meet old blocks.
 */
final class SearchSubspace {
    /** Well under FDB's 100 KB value limit; a cold term lookup reads one or two. */
    static final int BLOCK_SIZE = 32 * 1024;

    private SearchSubspace() {}

    /** A file's entry. */
    record FileEntry(long id, long length) {
        static FileEntry decode(byte[] value) {
            Tuple t = Tuple.fromBytes(value);
            return new FileEntry(t.getLong(0), t.getLong(1));
        }

        byte[] encode() {
            return Tuple.from(id, length).pack();
        }
    }

    static byte[][] index(DbHandle db, String sig) {
        return db.space().range(SEARCH, sig);
    }

    static byte[] file(DbHandle db, String sig, String name) {
        return db.space().pack(SEARCH, sig, FILES, name);
    }

    static byte[][] files(DbHandle db, String sig) {
        return db.space().range(SEARCH, sig, FILES);
    }

    static String fileName(DbHandle db, byte[] key) {
        return db.space().unpack(key).getString(3);
    }

    static byte[] block(DbHandle db, String sig, long fileId, long blockNo) {
        return db.space().pack(SEARCH, sig, BLOCKS, fileId, blockNo);
    }

    static byte[][] blocks(DbHandle db, String sig, long fileId) {
        return db.space().range(SEARCH, sig, BLOCKS, fileId);
    }

    static long blockNo(DbHandle db, byte[] key) {
        return db.space().unpack(key).getLong(4);
    }

    /** The signatures that have files in this database. */
    static java.util.Set<String> signatures(dev.chaise.kv.ReadTransaction tx, DbHandle db) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        byte[][] all = db.space().range(SEARCH);
        byte[] begin = all[0];
        while (true) {
            var kvs = tx.getRangeAsList(begin, all[1], 1, false);
            if (kvs.isEmpty()) return out;
            String sig = db.space().unpack(kvs.getFirst().key()).getString(1);
            out.add(sig);
            begin = index(db, sig)[1];
        }
    }
}
