package dev.chaise.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.apple.foundationdb.tuple.Tuple;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/** The fast encoder writes exactly the tuple layer's bytes, for every element type and mix of them. */
class TupleBytesProperties {

    @Property(tries = 3000)
    void integersAsTheTupleLayer(@ForAll long v) {
        assertArrayEquals(Tuple.from(v).pack(), TupleBytes.integer(v));
    }

    @Property(tries = 300)
    void integerEdgesAsTheTupleLayer(@ForAll("edges") long v) {
        assertArrayEquals(Tuple.from(v).pack(), TupleBytes.integer(v));
    }

    @Provide
    Arbitrary<Long> edges() {
        List<Long> edges = new ArrayList<>(List.of(0L, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1));
        for (int bits = 1; bits < 64; bits++) {
            long p = 1L << bits;
            edges.addAll(List.of(p, p - 1, p + 1, -p, -p + 1, -p - 1));
        }
        return Arbitraries.of(edges);
    }

    @Property(tries = 2000)
    void stringsAsTheTupleLayer(@ForAll String s) {
        assertArrayEquals(Tuple.from(s).pack(), TupleBytes.string(s));
    }

    @Property(tries = 500)
    void stringsWithNulsAndSurrogates(@ForAll("awkward") String s) {
        byte[] expected;
        try {
            expected = Tuple.from(s).pack();
        } catch (IllegalArgumentException e) { // lone surrogates: refused the same way
            assertThrows(IllegalArgumentException.class, () -> TupleBytes.string(s));
            return;
        }
        assertArrayEquals(expected, TupleBytes.string(s));
    }

    @Provide
    Arbitrary<String> awkward() {
        return Arbitraries.strings().withChars('\u0000', 'a', '\u00e9', '\u20ac', '\ud83d', '\ude00', '\uffff').ofMaxLength(40);
    }

    @Property(tries = 3000)
    void decodesAsTheTupleLayer(@ForAll("decodable") @Size(max = 8) List<Object> items) {
        byte[] packed;
        try {
            packed = Tuple.fromList(items).pack();
        } catch (IllegalArgumentException e) {
            return; // a lone surrogate: no tuple holds it
        }
        byte[] framed = new byte[packed.length + 4]; // decoded from the middle of an array, as keys after a prefix are
        System.arraycopy(packed, 0, framed, 3, packed.length);
        List<Object> out = new ArrayList<>();
        boolean wide = items.stream().anyMatch(o -> o instanceof Long l && l <= -(1L << 56)); // 8-byte negatives
        if (TupleBytes.decodeSimple(framed, 3, 3 + packed.length, out)) {
            assertSameItems(Tuple.fromBytes(packed).getItems(), out);
        } else {
            assertTrue(wide, () -> "declined " + items);
        }
    }

    @Provide
    Arbitrary<List<Object>> decodable() {
        Arbitrary<Object> one = Arbitraries.oneOf(
                Arbitraries.longs().map(Object.class::cast),
                edges().map(Object.class::cast),
                Arbitraries.strings().ofMaxLength(20).map(Object.class::cast),
                awkward().map(Object.class::cast),
                Arbitraries.doubles().map(Object.class::cast),
                Arbitraries.of(-0.0d, 0.0d, Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, 1e-300).map(Object.class::cast),
                Arbitraries.of(Boolean.TRUE, Boolean.FALSE).map(Object.class::cast),
                Arbitraries.of((byte) 0, (byte) 0xff, (byte) 1, (byte) 'a').array(byte[].class).ofMaxSize(20).map(Object.class::cast),
                Arbitraries.just(null));
        return one.list().ofMaxSize(8);
    }

    /** Equal lists, byte strings compared by their bytes. */
    static void assertSameItems(List<Object> expected, List<Object> actual) {
        assertEquals(expected.size(), actual.size(), () -> expected + " vs " + actual);
        for (int i = 0; i < expected.size(); i++) {
            Object e = expected.get(i);
            if (e instanceof byte[] b) assertArrayEquals(b, (byte[]) actual.get(i));
            else assertEquals(e instanceof Integer n ? (Object) (long) n : e, actual.get(i));
        }
    }

    @Property(tries = 500)
    void declinesWhatItDoesNotDecode(@ForAll("elements") @Size(max = 8) List<Object> items) {
        byte[] packed = Tuple.fromList(items).pack();
        List<Object> out = new ArrayList<>();
        if (!TupleBytes.decodeSimple(packed, 0, packed.length, out)) return;
        assertSameItems(Tuple.fromBytes(packed).getItems(), out);
    }

    @Property(tries = 1000)
    void mixedElementsAsTheTupleLayer(@ForAll("elements") @Size(max = 8) List<Object> items) {
        assertArrayEquals(Tuple.fromList(items).pack(), TupleBytes.pack(items.toArray()));
        byte[] prefix = {1, 0, (byte) 0xff};
        TupleBytes t = TupleBytes.startingWith(prefix, 0);
        for (Object o : items) t.add(o);
        byte[] expected = Tuple.fromList(items).pack();
        byte[] withPrefix = new byte[prefix.length + expected.length];
        System.arraycopy(prefix, 0, withPrefix, 0, prefix.length);
        System.arraycopy(expected, 0, withPrefix, prefix.length, expected.length);
        assertArrayEquals(withPrefix, t.toArray());
    }

    @Provide
    Arbitrary<List<Object>> elements() {
        Arbitrary<Object> simple = Arbitraries.oneOf(
                Arbitraries.longs().map(Object.class::cast),
                Arbitraries.integers().map(Object.class::cast),
                Arbitraries.strings().ofMaxLength(20).map(Object.class::cast),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(20).map(Object.class::cast),
                Arbitraries.of(true, false).map(Object.class::cast),
                Arbitraries.doubles().map(Object.class::cast),
                Arbitraries.just(null));
        // Nested tuples (a branch's ancestors), where a null is 00 ff, and a tuple nested in one.
        Arbitrary<Object> nested = simple.list().ofMaxSize(4).map(l -> (Object) Tuple.fromList(l));
        Arbitrary<Object> one = Arbitraries.oneOf(simple, nested, nested.list().ofMaxSize(3).map(l -> (Object) Tuple.fromList(l)));
        return one.list().ofMaxSize(8);
    }
}
