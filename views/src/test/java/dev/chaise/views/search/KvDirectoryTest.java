package dev.chaise.views.search;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.Storage;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The KV directory keeps Lucene's file semantics, and an IndexWriter commits to it and reopens from it. */
class KvDirectoryTest {
    private KvStore kv;
    private Storage storage;
    private Database db;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        storage = new Storage(kv, "{}");
        db = storage.create("d");
    }

    @AfterEach
    void close() {
        storage.close();
        kv.close();
    }

    private KvDirectory dir(long cacheBytes) {
        return new KvDirectory(db, "sig", new BlockCache(cacheBytes));
    }

    @Test
    void filesAreWrittenReadRenamedAndDeleted() throws Exception {
        KvDirectory d = dir(1 << 20);
        byte[] data = new byte[SearchSubspace.BLOCK_SIZE * 70 + 123]; // several flushes and a short last block
        new Random(7).nextBytes(data);
        try (IndexOutput out = d.createOutput("a.bin", IOContext.DEFAULT)) {
            out.writeBytes(data, 0, 10);
            for (int i = 10; i < 5000; i++) out.writeByte(data[i]);
            out.writeBytes(data, 5000, data.length - 5000);
            assertEquals(data.length, out.getFilePointer());
        }
        assertThrows(FileAlreadyExistsException.class, () -> d.createOutput("a.bin", IOContext.DEFAULT));
        assertArrayEquals(new String[] {"a.bin"}, d.listAll());
        assertEquals(data.length, d.fileLength("a.bin"));

        // Read with a cache too small to hold a block: every block comes from the KV.
        KvDirectory cold = dir(1);
        try (IndexInput in = cold.openInput("a.bin", IOContext.DEFAULT)) {
            byte[] back = new byte[data.length];
            in.readBytes(back, 0, back.length);
            assertArrayEquals(data, back);
            in.seek(SearchSubspace.BLOCK_SIZE - 1);
            assertEquals(data[SearchSubspace.BLOCK_SIZE - 1], in.readByte());
            assertEquals(data[SearchSubspace.BLOCK_SIZE], in.readByte());
            IndexInput slice = in.slice("s", SearchSubspace.BLOCK_SIZE * 3L - 5, 100);
            byte[] part = new byte[100];
            slice.readBytes(part, 0, 100);
            assertArrayEquals(java.util.Arrays.copyOfRange(data, SearchSubspace.BLOCK_SIZE * 3 - 5, SearchSubspace.BLOCK_SIZE * 3 + 95), part);
            assertThrows(java.io.EOFException.class, slice::readByte);
            IndexInput clone = in.clone();
            clone.seek(1);
            assertEquals(data[1], clone.readByte());
        }

        d.rename("a.bin", "b.bin");
        assertArrayEquals(new String[] {"b.bin"}, d.listAll());
        assertThrows(NoSuchFileException.class, () -> d.openInput("a.bin", IOContext.DEFAULT));
        assertThrows(NoSuchFileException.class, () -> d.rename("a.bin", "c.bin"));
        try (IndexInput in = dir(1).openInput("b.bin", IOContext.DEFAULT)) {
            assertEquals(data[data.length - 1], readAt(in, data.length - 1));
        }
        d.deleteFile("b.bin");
        assertArrayEquals(new String[0], d.listAll());
        assertThrows(NoSuchFileException.class, () -> d.deleteFile("b.bin"));
        // No block is left behind.
        assertEquals(0, (int) db.read(r -> {
            byte[][] all = SearchSubspace.index(r.handle(), "sig");
            return r.tx().getRangeAsList(all[0], all[1], 0, false).size();
        }));
    }

    @Test
    void anOutputIsListedWhileBeingWrittenSoACrashLeavesNothingUnlisted() throws Exception {
        KvDirectory d = dir(1 << 20);
        IndexOutput out = d.createOutput("_0.tmp", IOContext.DEFAULT);
        out.writeBytes(new byte[KvDirectory.FLUSH_BYTES + 10], 0, KvDirectory.FLUSH_BYTES + 10); // one flush committed
        // The process dies here: the file is listed, unreadable, and its delete takes its blocks.
        assertArrayEquals(new String[] {"_0.tmp"}, d.listAll());
        assertThrows(java.io.FileNotFoundException.class, () -> d.openInput("_0.tmp", IOContext.DEFAULT));
        d.deleteFile("_0.tmp");
        assertEquals(0, (int) db.read(r -> {
            byte[][] all = SearchSubspace.index(r.handle(), "sig");
            return r.tx().getRangeAsList(all[0], all[1], 0, false).size();
        }));
    }

    @Test
    void anIndexWriterCommitsAndAFreshDirectoryReopensTheCommit() throws Exception {
        try (KvDirectory d = dir(8 << 20);
             IndexWriter w = new IndexWriter(d, new IndexWriterConfig(new StandardAnalyzer()))) {
            for (int i = 0; i < 2000; i++) {
                Document doc = new Document();
                doc.add(new StringField("_id", "doc" + i, Field.Store.YES));
                doc.add(new TextField("body", "hello world number " + i + (i % 2 == 0 ? " even" : " odd"), Field.Store.NO));
                w.addDocument(doc);
                if (i % 500 == 499) w.commit(); // several segments
            }
            w.deleteDocuments(new Term("_id", "doc0"));
            w.setLiveCommitData(Map.of("update_seq", "42").entrySet());
            w.commit();
            w.forceMerge(1); // a merge reads every segment back and writes a new one
            w.commit();
        }
        // A new directory with an empty cache: everything is read from the KV.
        try (KvDirectory d = dir(1 << 20); DirectoryReader r = DirectoryReader.open(d)) {
            assertEquals(1999, r.numDocs());
            assertEquals("42", r.getIndexCommit().getUserData().get("update_seq"));
            IndexSearcher s = new IndexSearcher(r);
            assertEquals(999, s.count(new TermQuery(new Term("body", "even"))));
            assertEquals(1, s.count(new TermQuery(new Term("_id", "doc1999"))));
            assertEquals(List.of(), List.of(d.getPendingDeletions().toArray()));
            for (String f : d.listAll()) assertTrue(!f.startsWith("pending_segments"), f);
        }
        // A writer opened on the index appends to it.
        try (KvDirectory d = dir(1 << 20);
             IndexWriter w = new IndexWriter(d, new IndexWriterConfig(new StandardAnalyzer()).setOpenMode(IndexWriterConfig.OpenMode.APPEND))) {
            w.deleteDocuments(new Term("_id", "doc1"));
            w.commit();
            try (DirectoryReader r = DirectoryReader.open(d)) {
                assertEquals(1998, r.numDocs());
            }
        }
    }

    @Test
    void aReaderOnASupersededCommitKeepsReadingWhileItIsKept() throws Exception {
        try (KvDirectory d = dir(8 << 20);
             IndexWriter w = new IndexWriter(d, new IndexWriterConfig(new StandardAnalyzer()).setIndexDeletionPolicy(new KeepRecentCommits(60_000)))) {
            for (int i = 0; i < 300; i++) {
                Document doc = new Document();
                doc.add(new StringField("_id", "doc" + i, Field.Store.YES));
                w.addDocument(doc);
                if (i % 100 == 99) w.commit();
            }
            // A reader with a cache too small to hold anything: every read goes to the KV.
            try (KvDirectory cold = dir(1); DirectoryReader r = DirectoryReader.open(cold)) {
                w.deleteDocuments(new Term("_id", "doc5"));
                w.forceMerge(1); // the segments the reader has open are merged away
                w.commit();
                w.commit();
                assertEquals(300, r.numDocs());
                assertEquals("doc299", r.storedFields().document(299).get("_id"));
            }
        }
    }

    private static byte readAt(IndexInput in, long p) throws java.io.IOException {
        in.seek(p);
        return in.readByte();
    }
}
