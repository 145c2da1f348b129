package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.Keys;
import dev.chaise.kv.TupleBytes;

/**
 * The keys of one database, under its prefix {@code (1, DbId)}, tagged by {@link KeySpace.Db}.
 * Each RFC's subspace has one owning class, which encodes its keys and values.
 *
 * <pre>
 * (1, DbId)
 * ├── 0 META, Field = Value                                   DatabaseDirectory: uuid, revs_limit,
 * │                                                           security, incarnation, partitioned
 * ├── 1 DOCS, DocID, NotDeleted, RevPos, RevHash = RevMeta    DocumentBodies (RFC A)
 * │   └── ..., Path... = Leaf
 * ├── 2 REVISIONS, DocID, NotDeleted, RevPos, RevHash = Branch RevisionsSubspace (RFC C)
 * ├── 3 BY_ID, DocID = (Format, RevPos, RevHash)              ByIdSubspace (RFC B)
 * ├── 4 CHANGES, Incarnation, Versionstamp = Change           ChangesSubspace (RFC D)
 * ├── 5 STATS, Name = int64 little-endian                     DbStats (RFC B, atomic adds)
 * ├── 6 LOCAL, DocID = (Rev, Body)                            LocalDocuments
 * ├── 7 VIEWS, ...                                            MapIndexSubspace (views module, RFC E)
 * ├── 8 ATTACHMENTS, DocId, Md5, ChunkNo = bytes              AttachmentsSubspace
 * ├── 9 UPLOADS, StartMillis, Nonce, ChunkNo = bytes          AttachmentsSubspace: large bodies streaming in
 * ├── 10 PURGES, ...                                          PurgedInfos: the purge history
 * ├── 11 SEARCH, Sig, ...                                     SearchSubspace (views module): Nouveau's Lucene files
 * ├── 12 ACCESS, ...                                          AccessIndex: per-document access databases
 * └── 13 PARTITIONS, Partition, Name = int64 little-endian    PartitionStats (RFC B per partition, atomic adds)
 * </pre>
 */
public record DatabaseSubspace(byte[] prefix) {

    public static DatabaseSubspace of(long dbId) {
        return new DatabaseSubspace(KeySpace.databasePrefix(dbId));
    }

    /** {@code prefix + pack(sub, items...)}. */
    public byte[] pack(long sub, Object... items) {
        TupleBytes t = TupleBytes.startingWith(prefix, 48).add(sub);
        for (Object o : items) t.add(o);
        return t.toArray();
    }

    /** The key range of everything under {@code (sub, items...)}. */
    public byte[][] range(long sub, Object... items) {
        byte[] p = pack(sub, items);
        return new byte[][] {Keys.concat(p, new byte[] {0x00}), Keys.concat(p, new byte[] {(byte) 0xff})};
    }

    /** Unpacks a key of this database back into its tuple, without the prefix. */
    public Tuple unpack(byte[] key) {
        return Tuple.fromBytes(key, prefix.length, key.length - prefix.length);
    }

    /**
     * The end of a tuple-encoded key's own subtree: {@code key + ff}, not {@code strinc(key)},
     * which would take in the keys of a longer string or byte string that continues past the key's
     * terminating 00 (a NUL there encodes as {@code 00 ff ...}). No tuple element starts with ff.
     */
    public static byte[] subtreeEnd(byte[] key) {
        return Keys.concat(key, new byte[] {(byte) 0xff});
    }

    public byte[] begin() {
        return prefix;
    }

    public byte[] end() {
        return Keys.strinc(prefix);
    }
}
