package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * A changes row (RFC D) reads back as what was written, on {@link ChangesSubspace#decode}'s fast
 * path: ids and rev hashes with NULs (escaped in the tuple encoding) and outside the BMP,
 * non-canonical hashes, several database ids and incarnations, any versionstamp.
 */
class ChangesDecodeProperties {

    @Property(tries = 2000)
    void aRowReadsBackAsWritten(@ForAll("ids") String id, @ForAll @LongRange(min = 1, max = 1L << 40) long pos, @ForAll("hashes") String hash,
                                @ForAll @IntRange(min = 1, max = 100_000) int branches, @ForAll boolean deleted,
                                @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long dbId, @ForAll @IntRange(min = 0, max = 255) int incarnation,
                                @ForAll("stamps") byte[] stamp) {
        DbHandle db = new DbHandle("db", dbId, DatabaseSubspace.of(dbId), "uuid", 1000, "{}", incarnation, new byte[0], false, false);
        Sequence seq = new Sequence(incarnation, Versionstamp.fromBytes(stamp));
        RevId rev = RevId.of(pos, hash);
        byte[] value = Tuple.from(ChangesSubspace.FORMAT, id, pos, rev.hashBytes(), (long) branches, !deleted).pack();
        Change read = ChangesSubspace.decode(db, new KeyValue(ChangesSubspace.key(db, seq), value));
        assertEquals(new Change(seq, id, rev, branches, deleted), read);
    }

    @Provide
    Arbitrary<String> ids() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMinLength(1).ofMaxLength(30).filter(dev.chaise.kv.TupleBytes::wellFormed),
                Arbitraries.strings().withChars('\u0000', '\u00ff', 'a', '\u00e9', '\ud83d', '\ude00').ofMinLength(1).ofMaxLength(12)
                        .filter(dev.chaise.kv.TupleBytes::wellFormed));
    }

    @Provide
    Arbitrary<String> hashes() {
        return Arbitraries.oneOf(Arbitraries.strings().withChars("0123456789abcdef").ofLength(32),
                Arbitraries.strings().withChars('\u0000', 'x', 'F', '\u00e9', '\ud83d', '\ude00').ofMaxLength(20).filter(dev.chaise.kv.TupleBytes::wellFormed));
    }

    @Provide
    Arbitrary<byte[]> stamps() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(12).ofMaxSize(12).filter(b -> {
            for (int i = 0; i < 10; i++) if (b[i] != (byte) 0xff) return true;
            return false; // all 0xff in the first ten bytes is an incomplete versionstamp
        });
    }
}
