package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.ContainerNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * RFC A's "exploded" document body: one KV per JSON leaf, the leaf's path packed as a tuple after
 * the revision's key prefix, the leaf's value packed as a one-element tuple. A pure codec: it reads
 * and writes nothing itself.
 *
 * <p>Key layout for {@code {"name":"Ada","n":{"big":12345678901234567890,"pi":3.14},
 * "tags":["x",{},[]],"bio":"<250 KB of text>"}} under a revision prefix:
 *
 * <pre>
 * prefix                          = RevisionMetadata            (written by the caller; skipped here)
 * +-- ("bio")                     = (b'"', 3)                   chunked string marker: 3 parts
 * |   +-- ("bio", (0,))           = ("first ~100 KB...")        chunk keys end in a nested tuple,
 * |   +-- ("bio", (1,))           = ("...")                     never a bare integer, so they cannot
 * |   +-- ("bio", (2,))           = ("...")                     be mistaken for array positions
 * +-- ("n")                                                     no KV: a non-empty container exists
 * |   +-- ("n", "big")            = (12345678901234567890)        only through its children
 * |   +-- ("n", "pi")             = (3.14)
 * +-- ("name")                    = ("Ada")
 * +-- ("tags")
 *     +-- ("tags", 0)             = ("x")
 *     +-- ("tags", 1)             = (b'{')                      empty object marker
 *     +-- ("tags", 2)             = (b'[')                      empty array marker
 * </pre>
 *
 * Object members are tuple strings, array positions tuple integers (so 2 sorts before 10).
 *
 * <p><b>Values.</b> A scalar leaf is a one-element tuple of null ({@code 00}), a boolean ({@code 26}
 * / {@code 27}), a unicode string ({@code 02…00}), an integer ({@code 0b…1d}, arbitrary precision
 * up to 255 bytes of magnitude) or a double ({@code 21}). <b>Markers</b> are tuples whose first
 * element is a <em>byte string</em> (type code {@code 01}), which no JSON scalar ever encodes to:
 * {@code 01 7b 00} = empty object, {@code 01 5b 00} = empty array, {@code 01 22 00 <int N>} = a
 * string too long for one value, stored as N consecutive chunk KVs.
 *
 * <p><b>Chunking.</b> A string whose one-KV value would exceed {@link KvLimits#MAX_VALUE_BYTES} is
 * split on code point boundaries (never inside a UTF-8 sequence or surrogate pair) into the fewest
 * greedy chunks whose tuple-encoded value fits the limit; each chunk is itself a valid tuple string.
 *
 * <p><b>Numbers.</b> Integral nodes are stored as tuple integers and come back as {@code IntNode},
 * {@code LongNode} or {@code BigIntegerNode} by magnitude, exactly as {@link Json#MAPPER} parses them;
 * floating nodes are stored as doubles (sign of zero kept). Integers beyond 255 bytes, non-finite
 * doubles and strings/names with unpaired surrogates are rejected with BAD_REQUEST.
 *
 * <p>Object members come back in key order (UTF-8 byte order, which is code point order), not in
 * the order written; RFC A allows this.
 */
public final class ExplodedJson {
    static final byte[] EMPTY_OBJECT = Tuple.from((Object) new byte[] {'{'}).pack();
    static final byte[] EMPTY_ARRAY = Tuple.from((Object) new byte[] {'['}).pack();
    private static final byte[] CHUNKED_TAG = {'"'};
    private static final byte[] NULL = Tuple.from((Object) null).pack();
    private static final byte[] TRUE = Tuple.from(true).pack();
    private static final byte[] FALSE = Tuple.from(false).pack();

    /** Room for a chunk's UTF-8 bytes once the tuple string's {@code 02} and {@code 00} are added. */
    static final int MAX_CHUNK_PAYLOAD = KvLimits.MAX_VALUE_BYTES - 2;
    /** The tuple layer's integer limit. */
    static final int MAX_INTEGER_BYTES = 255;
    private static final int MAX_PATH_IN_REASON = 200;

    private ExplodedJson() {}

    /**
     * One KV per leaf of {@code body}, in key order, keys all strictly longer than {@code prefix}.
     * Every key and value is within FDB's limits, or this throws BAD_REQUEST before returning
     * anything. An empty body gives an empty list.
     */
    public static List<KeyValue> explode(byte[] prefix, ObjectNode body) {
        return explode(prefix.length, body).withPrefix(prefix);
    }

    /**
     * The leaves of {@code body} without their key prefix, for a prefix of {@code prefixLength}
     * bytes: a revision's prefix holds its hash, which is computed from these leaves.
     */
    public static Leaves explode(int prefixLength, ObjectNode body) {
        Exploder exploder = new Exploder(prefixLength);
        exploder.run(body);
        return exploder.leaves();
    }

    /**
     * Exploded leaves in key order, without the prefix: leaf {@code i}'s path is
     * {@code paths[ends[i-1] .. ends[i])} (from 0 for the first), its value {@code values[i]}.
     * One buffer for every path, since a key cannot be built before its prefix is known.
     */
    public record Leaves(byte[] paths, int[] ends, byte[][] values) {
        public static final Leaves NONE = new Leaves(new byte[0], new int[0], new byte[0][]);

        public int size() {
            return ends.length;
        }

        public int pathStart(int i) {
            return i == 0 ? 0 : ends[i - 1];
        }

        public List<KeyValue> withPrefix(byte[] prefix) {
            List<KeyValue> out = new ArrayList<>(size());
            for (int i = 0; i < size(); i++) {
                int start = pathStart(i);
                byte[] key = Arrays.copyOf(prefix, prefix.length + ends[i] - start);
                System.arraycopy(paths, start, key, prefix.length, ends[i] - start);
                out.add(new KeyValue(key, values[i]));
            }
            return out;
        }

        /** Sum of key and value lengths under a prefix of {@code prefixLength}: the body's share of sizes.active. */
        public long activeSize(int prefixLength) {
            long total = (long) size() * prefixLength + paths.length;
            for (byte[] v : values) total += v.length;
            return total;
        }
    }

    /**
     * Rebuilds the body from its KVs, read in key order. A KV exactly at {@code prefix} (the
     * revision metadata) is skipped. Streams: one pass, work linear in the bytes read.
     *
     * @throws IllegalStateException if the KVs are not a valid exploded body (a storage bug)
     */
    public static ObjectNode implode(byte[] prefix, Iterator<KeyValue> kvs) {
        return new Imploder(prefix, kvs).run();
    }

    /** Bytes of the body's compact JSON encoding: the measure for max_document_size and sizes.external. */
    public static long externalSize(JsonNode body) {
        return JsonSize.of(body).bytes();
    }

    /** Sum of key and value lengths: the body's share of sizes.active. */
    public static long activeSize(List<KeyValue> kvs) {
        long total = 0;
        for (KeyValue kv : kvs) total += kv.key().length + kv.value().length;
        return total;
    }

    // ---------------------------------------------------------------- explode

    private record Member(String name, byte[] element, JsonNode value) {}

    /** A container being walked: its key length and a cursor over its children. */
    private static final class Frame {
        final int keyLength;
        final Member[] members; // objects, sorted by encoded name
        final JsonNode array;
        int next;

        Frame(int keyLength, Member[] members, JsonNode array) {
            this.keyLength = keyLength;
            this.members = members;
            this.array = array;
        }

        boolean hasNext() {
            return next < (members != null ? members.length : array.size());
        }

        /** The path element of the child being visited: a name (String) or a position (Long). */
        Object current() {
            return members != null ? members[next - 1].name() : (Object) (long) (next - 1);
        }
    }

    /**
     * An object's member order: its names' elements as {@link MemberNames} holds them (one array
     * per name, so identity says "the same name") and the order that sorts them. The documents of
     * a bulk write mostly share their shapes, and sorting each object's members again was 1.2 %
     * of a {@code _bulk_docs} request's server CPU. A few shapes are kept, by size and first name,
     * so that a document's nested objects do not push out its top level's.
     */
    private record Shape(byte[][] elements, int[] order) {}

    /** Members in key order: by their encoded names. */
    private static final Comparator<Member> BY_NAME = (a, b) -> Arrays.compareUnsigned(a.element(), b.element());
    private static final int SHAPES = 8;
    /** Objects with more members are sorted each time. */
    private static final int MAX_SHAPE_MEMBERS = 32;
    /** Racy by design: a Shape is immutable (final fields), so a reader sees it whole or not at all. */
    private static final Shape[] shapes = new Shape[SHAPES];

    /** Sorts members by their encoded name, as keys order them. */
    static void sortMembers(Member[] members) {
        int n = members.length;
        if (n < 2) return;
        if (n > MAX_SHAPE_MEMBERS) {
            Arrays.sort(members, BY_NAME);
            return;
        }
        int slot = (n * 31 + System.identityHashCode(members[0].element())) & (SHAPES - 1);
        Shape known = shapes[slot];
        Member[] given = members.clone();
        if (known != null && known.elements().length == n && sameNames(known.elements(), given)) {
            for (int i = 0; i < n; i++) members[i] = given[known.order()[i]];
            return;
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> BY_NAME.compare(given[a], given[b]));
        byte[][] elements = new byte[n][];
        int[] sorted = new int[n];
        for (int i = 0; i < n; i++) {
            elements[i] = given[i].element();
            sorted[i] = order[i];
            members[i] = given[order[i]];
        }
        shapes[slot] = new Shape(elements, sorted);
    }

    private static boolean sameNames(byte[][] elements, Member[] members) {
        for (int i = 0; i < members.length; i++) {
            if (elements[i] != members[i].element()) return false;
        }
        return true;
    }

    private static final class Exploder {
        final int prefixLength;
        byte[] paths = new byte[256];
        int pathsLength;
        int[] ends = new int[16];
        byte[][] values = new byte[16][];
        int count;
        final ArrayDeque<Frame> stack = new ArrayDeque<>();
        byte[] key = new byte[64];
        int keyLength;

        Exploder(int prefixLength) {
            this.prefixLength = prefixLength;
        }

        Leaves leaves() {
            return count == 0 ? Leaves.NONE : new Leaves(Arrays.copyOf(paths, pathsLength), Arrays.copyOf(ends, count), Arrays.copyOf(values, count));
        }

        // Iterative, so nesting is bounded by the key limit rather than the thread's stack.
        void run(ObjectNode body) {
            if (body.isEmpty()) return;
            stack.push(frame(body, 0));
            while (!stack.isEmpty()) {
                Frame f = stack.peek();
                if (!f.hasNext()) {
                    stack.pop();
                    continue;
                }
                keyLength = f.keyLength;
                JsonNode child;
                if (f.members != null) {
                    Member m = f.members[f.next++];
                    append(m.element());
                    child = m.value();
                } else {
                    long index = f.next++;
                    append(TupleBytes.integer(index));
                    child = f.array.get((int) index);
                }
                checkKeyLength(keyLength);
                if (child.isContainerNode() && !child.isEmpty()) {
                    stack.push(frame(child, keyLength));
                } else {
                    leaf(child);
                }
            }
        }

        Frame frame(JsonNode container, int keyLength) {
            if (container.isArray()) return new Frame(keyLength, null, container);
            Member[] members = new Member[container.size()];
            int i = 0;
            for (Map.Entry<String, JsonNode> e : container.properties()) {
                String name = e.getKey();
                byte[] element = MemberNames.of(name).element();
                if (element == null) throw StorageException.badRequest(Json.INVALID_JSON);
                members[i++] = new Member(name, element, e.getValue());
            }
            sortMembers(members);
            return new Frame(keyLength, members, null);
        }

        void leaf(JsonNode v) {
            switch (v.getNodeType()) {
                case NULL -> emit(NULL.clone());
                case BOOLEAN -> emit(v.booleanValue() ? TRUE.clone() : FALSE.clone());
                case STRING -> string(v.textValue());
                case NUMBER -> number(v);
                case OBJECT -> emit(EMPTY_OBJECT.clone());
                case ARRAY -> emit(EMPTY_ARRAY.clone());
                default -> throw new IllegalArgumentException("not a JSON value: " + v.getNodeType() + " at " + pathForReason());
            }
        }

        void number(JsonNode v) {
            if (v.isIntegralNumber()) {
                if (v.canConvertToLong()) {
                    emit(TupleBytes.integer(v.longValue()));
                    return;
                }
                BigInteger b = v.bigIntegerValue();
                if ((b.abs().bitLength() + 7) / 8 > MAX_INTEGER_BYTES) {
                    throw StorageException.badRequest("Number too large at " + pathForReason()
                            + ": integers are limited to " + MAX_INTEGER_BYTES + " bytes (about 614 decimal digits)");
                }
                emit(Tuple.from(b).pack());
            } else {
                double d = v.doubleValue();
                if (!Double.isFinite(d)) throw StorageException.badRequest(Json.INVALID_JSON);
                emit(Tuple.from(d).pack());
            }
        }

        void string(String s) {
            if (!TupleBytes.wellFormed(s)) throw StorageException.badRequest(Json.INVALID_JSON);
            // At most 3 UTF-8 bytes per char (a NUL takes 2, a surrogate pair 4): short strings need no count.
            if ((long) s.length() * 3 + 2 <= KvLimits.MAX_VALUE_BYTES || utf8TupleLength(s) + 2 <= KvLimits.MAX_VALUE_BYTES) {
                emit(TupleBytes.wellFormedString(s));
                return;
            }
            List<String> parts = split(s);
            emit(Tuple.from(CHUNKED_TAG, (long) parts.size()).pack());
            int stringKeyLength = keyLength;
            for (int i = 0; i < parts.size(); i++) {
                keyLength = stringKeyLength;
                append(chunkElement(i));
                checkKeyLength(keyLength);
                emit(Tuple.from(parts.get(i)).pack());
            }
        }

        void append(byte[] element) {
            int need = keyLength + element.length;
            if (need > key.length) key = Arrays.copyOf(key, Math.max(need, key.length * 2));
            System.arraycopy(element, 0, key, keyLength, element.length);
            keyLength = need;
        }

        void checkKeyLength(int pathLength) {
            int length = prefixLength + pathLength;
            if (length > KvLimits.MAX_KEY_BYTES) {
                throw StorageException.badRequest("Document field path too long at " + pathForReason()
                        + ": its storage key would be " + length + " bytes, the limit is " + KvLimits.MAX_KEY_BYTES);
            }
        }

        void emit(byte[] value) {
            if (count == ends.length) {
                ends = Arrays.copyOf(ends, count * 2);
                values = Arrays.copyOf(values, count * 2);
            }
            if (pathsLength + keyLength > paths.length) paths = Arrays.copyOf(paths, Math.max(pathsLength + keyLength, paths.length * 2));
            System.arraycopy(key, 0, paths, pathsLength, keyLength);
            pathsLength += keyLength;
            ends[count] = pathsLength;
            values[count++] = value;
        }

        /**
         * The path of the node being visited as a JSON Pointer (RFC 6901), cut to a readable
         * length: each open container's current child, outermost first. Rebuilt only for a
         * reason, so the walk keeps no path of its own.
         */
        String pathForReason() {
            StringBuilder sb = new StringBuilder();
            for (Iterator<Frame> it = stack.descendingIterator(); it.hasNext(); ) {
                Frame f = it.next();
                if (f.next == 0) continue; // pushed, not yet entered
                Object p = f.current();
                sb.append('/');
                sb.append(p instanceof String name ? name.replace("~", "~0").replace("/", "~1") : p.toString());
                if (sb.length() > MAX_PATH_IN_REASON) break;
            }
            if (sb.length() > MAX_PATH_IN_REASON) {
                int cut = MAX_PATH_IN_REASON;
                if (Character.isHighSurrogate(sb.charAt(cut - 1))) cut--;
                sb.setLength(cut);
                sb.append("...");
            }
            return sb.toString();
        }
    }

    /** The chunk's key element: a nested tuple, a type that never appears in a field path. */
    static byte[] chunkElement(int index) {
        return Tuple.from(Tuple.from((long) index)).pack();
    }

    /** The string's bytes inside a tuple string: UTF-8, each NUL escaped to two bytes. */
    static long utf8TupleLength(String s) {
        long n = 0;
        for (int i = 0, len = s.length(); i < len; i++) n += charCost(s.charAt(i));
        return n;
    }

    // A surrogate pair is 4 UTF-8 bytes, so each half costs 2.
    private static int charCost(char c) {
        if (c == 0) return 2;
        if (c < 0x80) return 1;
        if (c < 0x800 || Character.isSurrogate(c)) return 2;
        return 3;
    }

    /** Greedy split at code point boundaries; every part's tuple payload fits MAX_CHUNK_PAYLOAD. */
    static List<String> split(String s) {
        List<String> parts = new ArrayList<>();
        int start = 0;
        int cost = 0;
        for (int i = 0, len = s.length(); i < len; ) {
            int width = Character.isHighSurrogate(s.charAt(i)) ? 2 : 1;
            int c = width == 2 ? 4 : charCost(s.charAt(i));
            if (cost + c > MAX_CHUNK_PAYLOAD) {
                parts.add(s.substring(start, i));
                start = i;
                cost = 0;
            }
            cost += c;
            i += width;
        }
        parts.add(s.substring(start));
        return parts;
    }

    // ---------------------------------------------------------------- implode

    private static final class Imploder {
        final byte[] prefix;
        final Iterator<KeyValue> kvs;
        final ObjectNode root = Json.NODES.objectNode();
        /** open.get(i + 1) is the container at path elements 0..i of the previous key. */
        final ArrayList<ContainerNode<?>> open = new ArrayList<>();
        final ArrayList<Object> openPath = new ArrayList<>();
        final ArrayList<Object> pathScratch = new ArrayList<>();
        final ArrayList<Object> valueScratch = new ArrayList<>(2);
        byte[] previous;

        Imploder(byte[] prefix, Iterator<KeyValue> kvs) {
            this.prefix = prefix;
            this.kvs = kvs;
            this.previous = prefix;
            open.add(root);
        }

        ObjectNode run() {
            while (kvs.hasNext()) {
                KeyValue kv = kvs.next();
                byte[] k = kv.key();
                if (!Keys.startsWith(k, prefix)) throw corrupt(k, "key outside the document's prefix");
                if (k.length == prefix.length) continue;
                if (Keys.compare(previous, k) >= 0) throw corrupt(k, "keys out of order");
                previous = k;
                List<Object> path = elements(k, k, prefix.length, k.length, pathScratch);
                int n = path.size();

                int shared = 0;
                int limit = Math.min(openPath.size(), n - 1);
                while (shared < limit && openPath.get(shared).equals(path.get(shared))) shared++;
                open.subList(shared + 1, open.size()).clear();
                openPath.subList(shared, openPath.size()).clear();

                for (int j = shared; j < n - 1; j++) {
                    Object next = path.get(j + 1);
                    ContainerNode<?> child;
                    if (next instanceof String) child = Json.NODES.objectNode();
                    else if (next instanceof Long) child = Json.NODES.arrayNode();
                    else throw corrupt(k, "unexpected path element " + next);
                    attach(open.get(j), path.get(j), child, k);
                    open.add(child);
                    openPath.add(path.get(j));
                }
                attach(open.get(n - 1), path.get(n - 1), value(k, kv.value()), k);
            }
            return root;
        }

        JsonNode value(byte[] k, byte[] v) {
            List<Object> t = elements(k, v, 0, v.length, valueScratch);
            if (t.size() == 0) throw corrupt(k, "empty value");
            Object o = t.get(0);
            if (o instanceof byte[] tag) {
                if (tag.length == 1 && t.size() == 1 && tag[0] == '{') return Json.NODES.objectNode();
                if (tag.length == 1 && t.size() == 1 && tag[0] == '[') return Json.NODES.arrayNode();
                if (tag.length == 1 && t.size() == 2 && tag[0] == '"' && t.get(1) instanceof Long parts && parts > 0) {
                    return chunks(k, parts);
                }
                throw corrupt(k, "unknown marker");
            }
            if (t.size() != 1) throw corrupt(k, "value is not a one-element tuple");
            if (o == null) return NullNode.getInstance();
            if (o instanceof Boolean b) return BooleanNode.valueOf(b);
            if (o instanceof String s) return TextNode.valueOf(s);
            if (o instanceof Long l) return integer(l);
            if (o instanceof BigInteger b) return b.bitLength() < 64 ? integer(b.longValue()) : BigIntegerNode.valueOf(b);
            if (o instanceof Double d) return DoubleNode.valueOf(d);
            throw corrupt(k, "unexpected value type " + o.getClass().getSimpleName());
        }

        JsonNode chunks(byte[] k, long parts) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < parts; i++) {
                if (!kvs.hasNext()) throw corrupt(k, "chunked string is missing part " + i + " of " + parts);
                KeyValue chunk = kvs.next();
                if (!Arrays.equals(chunk.key(), Keys.concat(k, chunkElement(i)))) {
                    throw corrupt(chunk.key(), "expected part " + i + " of " + parts + " of a chunked string");
                }
                Tuple t = unpack(chunk.key(), chunk.value(), 0, chunk.value().length);
                if (t.size() != 1 || !(t.get(0) instanceof String s)) throw corrupt(chunk.key(), "chunk is not a string");
                sb.append(s);
                previous = chunk.key();
            }
            return TextNode.valueOf(sb.toString());
        }

        void attach(ContainerNode<?> parent, Object element, JsonNode child, byte[] k) {
            if (parent instanceof ObjectNode object && element instanceof String name) {
                if (object.putIfAbsent(name, child) != null) throw corrupt(k, "member written twice");
            } else if (parent instanceof ArrayNode array && element instanceof Long index) {
                if (index != array.size()) throw corrupt(k, "array position " + index + " where " + array.size() + " was due");
                array.add(child);
            } else {
                throw corrupt(k, "path element " + element + " does not fit a " + parent.getNodeType());
            }
        }

        static JsonNode integer(long l) {
            return (int) l == l ? IntNode.valueOf((int) l) : LongNode.valueOf(l);
        }

        /**
         * The elements of {@code bytes[from, to)} (the key or the value of the KV at {@code k}), in
         * {@code scratch} when {@link TupleBytes#decodeSimple} can read them (almost every leaf),
         * else through {@link Tuple}.
         */
        static List<Object> elements(byte[] k, byte[] bytes, int from, int to, ArrayList<Object> scratch) {
            scratch.clear();
            try {
                if (TupleBytes.decodeSimple(bytes, from, to, scratch)) return scratch;
            } catch (RuntimeException e) {
                throw corrupt(k, "not a tuple: " + e.getMessage());
            }
            return unpack(k, bytes, from, to - from).getItems();
        }

        /** Unpacks part of {@code bytes} (the key or the value of the KV at {@code k}). */
        static Tuple unpack(byte[] k, byte[] bytes, int offset, int length) {
            try {
                return Tuple.fromBytes(bytes, offset, length);
            } catch (RuntimeException e) {
                throw corrupt(k, "not a tuple: " + e.getMessage());
            }
        }
    }

    private static IllegalStateException corrupt(byte[] key, String why) {
        String printable = Keys.printable(key);
        if (printable.length() > 300) printable = printable.substring(0, 300) + "...";
        return new IllegalStateException("corrupt exploded document at key " + printable + ": " + why);
    }
}
