package dev.chaise.views.query;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewCollation;
import dev.chaise.views.index.ViewException;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * CouchDB 3.5's built-in reduce functions (couch_query_servers), in Java: {@code _count},
 * {@code _sum}, {@code _stats}, {@code _approx_count_distinct}, {@code _top_N}, {@code _bottom_N},
 * {@code _first} and {@code _last}. Each keeps a partial a reduce tree can store and merge; where
 * CouchDB's result could depend on the order rows are merged in (ties), the partial breaks the tie
 * by index order or by JSON text, so the value never depends on how rows were cut into nodes.
 */
public final class BuiltinReducers {
    static final String SUM_ERROR = "The _sum function requires that map values be numbers, arrays of numbers, or objects. "
            + "Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values "
            + "for all fields are themselves numbers, arrays of numbers, or objects.";

    private BuiltinReducers() {}

    /** @param name a built-in as {@code DesignDoc} normalizes it, e.g. {@code _sum} or {@code _top_5} */
    public static Reducer<?> of(String name) {
        switch (name) {
            case "_count" -> {
                return new Count();
            }
            case "_sum" -> {
                return new Sum();
            }
            case "_stats" -> {
                return new Stats();
            }
            case "_approx_count_distinct" -> {
                return new Distinct();
            }
            case "_first" -> {
                return new Pick(true);
            }
            case "_last" -> {
                return new Pick(false);
            }
            default -> {
                if (name.startsWith("_top_")) return new Rank(true, Integer.parseInt(name.substring(5)));
                if (name.startsWith("_bottom_")) return new Rank(false, Integer.parseInt(name.substring(8)));
                throw new ViewException(ViewException.Kind.QUERY_PARSE_ERROR, "`" + name + "` is not a supported reduce function.");
            }
        }
    }

    // ---------------------------------------------------------------- _count

    static final class Count implements Reducer<Long> {
        @Override
        public Long reduce(List<Row> rows) {
            return (long) rows.size();
        }

        @Override
        public Long rereduce(List<Long> parts) {
            long n = 0;
            for (Long p : parts) n += p;
            return n;
        }

        @Override
        public boolean subtracts() {
            return true;
        }

        @Override
        public Long subtract(Long total, Long removed) {
            return total - removed;
        }

        @Override
        public byte[] encode(Long p) {
            return ByteBuffer.allocate(8).putLong(p).array();
        }

        @Override
        public Long decode(byte[] bytes) {
            return ByteBuffer.wrap(bytes).getLong();
        }

        @Override
        public JsonNode finish(Long p) {
            return Json.NODES.numberNode(p);
        }
    }

    // ---------------------------------------------------------------- _sum

    /**
     * Numbers, arrays of numbers (element-wise, the shorter padded) and objects (by member,
     * nested), as couch_query_servers sums; anything else makes the sum CouchDB's error object,
     * which then stays the group's value. Integers add exactly, as Erlang's do.
     */
    static final class Sum implements Reducer<JsonNode> {
        private static final JsonNode ZERO = Json.NODES.numberNode(0);

        @Override
        public JsonNode reduce(List<Row> rows) {
            JsonNode acc = ZERO;
            for (Row r : rows) {
                Long x = integral(r.valueJson());
                if (x != null && acc.isIntegralNumber()) acc = plus(acc, Json.NODES.numberNode(x));
                else acc = step(r.value(), acc);
                if (isError(acc)) return acc;
            }
            return acc;
        }

        @Override
        public JsonNode rereduce(List<JsonNode> parts) {
            JsonNode acc = ZERO;
            for (JsonNode p : parts) {
                acc = step(p, acc);
                if (isError(acc)) return acc;
            }
            return acc;
        }

        @Override
        public boolean failed(JsonNode p) {
            return isError(p);
        }

        private static boolean isError(JsonNode v) {
            return v.isObject() && "builtin_reduce_error".equals(v.path("error").asText(null));
        }

        private static JsonNode step(JsonNode v, JsonNode acc) {
            if (isError(v)) return v;
            try {
                return sum(v, acc);
            } catch (SumError e) {
                ObjectNode o = Json.NODES.objectNode();
                o.put("error", "builtin_reduce_error");
                o.put("reason", SUM_ERROR);
                o.set("caused_by", e.cause);
                return o;
            }
        }

        @Override
        public boolean subtracts() {
            return true;
        }

        /** Exact integer sums only: a floating-point sum cannot take a value back out exactly. */
        @Override
        public JsonNode subtract(JsonNode total, JsonNode removed) {
            if (!total.isIntegralNumber() || !removed.isIntegralNumber()) return null;
            return integer(total.bigIntegerValue().subtract(removed.bigIntegerValue()));
        }

        @Override
        public byte[] encode(JsonNode p) {
            return jsonBytes(p);
        }

        @Override
        public JsonNode decode(byte[] bytes) {
            return parse(bytes);
        }

        @Override
        public JsonNode finish(JsonNode p) {
            return p;
        }

        private static final class SumError extends RuntimeException {
            final JsonNode cause;

            SumError(JsonNode cause) {
                super(null, null, false, false);
                this.cause = cause;
            }
        }

        static JsonNode sum(JsonNode v, JsonNode acc) {
            if (v.isNumber() && acc.isNumber()) return plus(acc, v);
            if (v.isArray() && acc.isArray()) return sumArrays(acc, v);
            if (v.isNumber() && acc.isArray()) return sumArrays(acc, Json.NODES.arrayNode().add(v));
            if (v.isArray() && acc.isNumber()) return sumArrays(Json.NODES.arrayNode().add(acc), v);
            if (v.isObject()) {
                if (acc.isNumber() && acc.isIntegralNumber() && acc.bigIntegerValue().signum() == 0) return v;
                if (acc.isObject()) return sumObjects(v, acc);
            }
            throw new SumError(v);
        }

        private static JsonNode sumArrays(JsonNode xs, JsonNode ys) {
            ArrayNode out = Json.NODES.arrayNode();
            int n = Math.max(xs.size(), ys.size());
            for (int i = 0; i < n; i++) {
                JsonNode x = xs.get(i);
                JsonNode y = ys.get(i);
                if (x == null) out.add(y);
                else if (y == null) out.add(x);
                else if (x.isNumber() && y.isNumber()) out.add(plus(x, y));
                else throw new SumError(x.isNumber() ? y : x);
            }
            return out;
        }

        private static JsonNode sumObjects(JsonNode a, JsonNode b) {
            Map<String, JsonNode> m = new TreeMap<>();
            b.properties().forEach(e -> m.put(e.getKey(), e.getValue()));
            a.properties().forEach(e -> m.merge(e.getKey(), e.getValue(), (old, x) -> sum(x, old)));
            ObjectNode out = Json.NODES.objectNode();
            m.forEach(out::set);
            return out;
        }
    }

    /** A value's exact integer, read from its JSON without parsing, or null if it is not an int64. */
    static Long integral(String valueJson) {
        int n = valueJson.length();
        if (n == 0 || n > 19) return null;
        for (int i = 0; i < n; i++) {
            char ch = valueJson.charAt(i);
            if (!(ch >= '0' && ch <= '9') && !(i == 0 && ch == '-' && n > 1)) return null;
        }
        try {
            return Long.parseLong(valueJson);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Integers add exactly (as Erlang's bignums do); anything else as doubles. */
    static JsonNode plus(JsonNode a, JsonNode b) {
        if (a.isIntegralNumber() && b.isIntegralNumber()) {
            if (a.canConvertToLong() && b.canConvertToLong()) {
                long x = a.longValue();
                long y = b.longValue();
                long r = x + y;
                if (((x ^ r) & (y ^ r)) >= 0) return Json.NODES.numberNode(r);
            }
            return integer(a.bigIntegerValue().add(b.bigIntegerValue()));
        }
        return Json.NODES.numberNode(a.doubleValue() + b.doubleValue());
    }

    static JsonNode multiply(JsonNode a, JsonNode b) {
        if (a.isIntegralNumber() && b.isIntegralNumber()) return integer(a.bigIntegerValue().multiply(b.bigIntegerValue()));
        return Json.NODES.numberNode(a.doubleValue() * b.doubleValue());
    }

    static JsonNode integer(BigInteger r) {
        return r.bitLength() < 64 ? Json.NODES.numberNode(r.longValue()) : Json.NODES.numberNode(r);
    }

    static int compareNumbers(JsonNode a, JsonNode b) {
        if (a.isIntegralNumber() && b.isIntegralNumber()) return a.bigIntegerValue().compareTo(b.bigIntegerValue());
        if (a.isIntegralNumber() || b.isIntegralNumber()) {
            double x = a.doubleValue();
            double y = b.doubleValue();
            if (Double.isFinite(x) && Double.isFinite(y)) return new BigDecimal(a.asText()).compareTo(new BigDecimal(b.asText()));
            return Double.compare(x, y);
        }
        return Double.compare(a.doubleValue(), b.doubleValue());
    }

    // ---------------------------------------------------------------- _stats

    /**
     * {sum, count, min, max, sumsqr} as CouchDB 3.5 computes them, for numbers, pre-reduced stats
     * objects, and arrays of those (element by element: Erlang's {@code lists:zipwith}, which needs
     * arrays of one length). Where CouchDB fails, the partial becomes {@link Bad}, which a query of
     * the group reports. Its reason does not depend on how rows were cut into nodes: the first
     * value in index order that is not a number (or stats object, or array of them), else the
     * shapes that do not go together (numbers and arrays, or arrays of two lengths).
     */
    static final class Stats implements Reducer<Stats.S> {
        sealed interface S permits One, Many, Bad {}

        record One(JsonNode sum, JsonNode count, JsonNode min, JsonNode max, JsonNode sumsqr) implements S {
            static One of(JsonNode x) {
                return new One(x, Json.NODES.numberNode(1), x, x, multiply(x, x));
            }

            /** Equal extremes written differently (1 and 1.0) keep the shorter text, so the order of merges never shows. */
            One merged(One o) {
                return new One(plus(sum, o.sum), plus(count, o.count), extreme(min, o.min, -1), extreme(max, o.max, 1), plus(sumsqr, o.sumsqr));
            }

            private static JsonNode extreme(JsonNode a, JsonNode b, int sign) {
                int c = compareNumbers(a, b) * sign;
                if (c != 0) return c > 0 ? a : b;
                return a.toString().compareTo(b.toString()) <= 0 ? a : b;
            }

            boolean integral() {
                return sum.isIntegralNumber() && count.isIntegralNumber() && min.isIntegralNumber() && max.isIntegralNumber()
                        && sumsqr.isIntegralNumber();
            }

            ObjectNode toJson() {
                ObjectNode o = Json.NODES.objectNode();
                o.set("sum", sum);
                o.set("count", count);
                o.set("min", min);
                o.set("max", max);
                o.set("sumsqr", sumsqr);
                return o;
            }
        }

        record Many(List<One> elements) implements S {}

        /**
         * A group CouchDB cannot reduce: {@code reason} names its first bad value (null if every
         * value is fine on its own), {@code shapes} the shapes seen (-1 numbers, N arrays of N).
         */
        record Bad(String reason, java.util.SortedSet<Integer> shapes) implements S {}

        private static final One ZERO = new One(Json.NODES.numberNode(0), Json.NODES.numberNode(0), Json.NODES.numberNode(0),
                Json.NODES.numberNode(0), Json.NODES.numberNode(0));

        @Override
        public S reduce(List<Row> rows) {
            if (rows.isEmpty()) return ZERO;
            S acc = of(rows.getFirst().value());
            for (int i = 1; i < rows.size(); i++) acc = merge(acc, of(rows.get(i).value()));
            return acc;
        }

        @Override
        public S rereduce(List<S> parts) {
            S acc = parts.getFirst();
            for (int i = 1; i < parts.size(); i++) acc = merge(acc, parts.get(i));
            return acc;
        }

        /** One map value on its own. */
        private static S of(JsonNode v) {
            if (v.isArray()) {
                List<One> out = new ArrayList<>();
                for (JsonNode e : v) {
                    S s = e.isNumber() ? One.of(e) : e.isObject() ? unpack(e) : bad(invalid(e));
                    if (s instanceof Bad b) return new Bad(b.reason, shapes(v.size()));
                    out.add((One) s);
                }
                return new Many(out);
            }
            return v.isNumber() ? One.of(v) : v.isObject() ? unpack(v) : bad(invalid(v));
        }

        /** Two partials, the first one's rows before the second's. */
        private static S merge(S a, S b) {
            if (a instanceof One x && b instanceof One y) return x.merged(y);
            if (a instanceof Many x && b instanceof Many y && x.elements.size() == y.elements.size()) {
                List<One> out = new ArrayList<>();
                for (int i = 0; i < x.elements.size(); i++) out.add(x.elements.get(i).merged(y.elements.get(i)));
                return new Many(out);
            }
            String reason = a instanceof Bad x && x.reason != null ? x.reason : b instanceof Bad y ? y.reason : null;
            java.util.SortedSet<Integer> shapes = new java.util.TreeSet<>(shapesOf(a));
            shapes.addAll(shapesOf(b));
            return new Bad(reason, java.util.Collections.unmodifiableSortedSet(shapes));
        }

        private static java.util.SortedSet<Integer> shapesOf(S s) {
            return switch (s) {
                case One o -> shapes(-1);
                case Many m -> shapes(m.elements.size());
                case Bad b -> b.shapes;
            };
        }

        private static java.util.SortedSet<Integer> shapes(int shape) {
            return java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(List.of(shape)));
        }

        private static S unpack(JsonNode o) {
            String[] fields = {"sum", "count", "min", "max", "sumsqr"};
            JsonNode[] n = new JsonNode[5];
            for (int i = 0; i < 5; i++) {
                JsonNode x = o.get(fields[i]);
                if (x == null) return bad("user _stats input missing required field " + fields[i] + " (" + o + ")");
                if (!x.isNumber()) return bad("non-numeric _stats input received for " + fields[i] + ": " + x);
                n[i] = x;
            }
            return new One(n[0], n[1], n[2], n[3], n[4]);
        }

        private static Bad bad(String reason) {
            return new Bad(reason, shapes(-1));
        }

        private static String invalid(JsonNode v) {
            return "The _stats function requires that map values be numbers or arrays of numbers, not '" + v + "'";
        }

        @Override
        public boolean subtracts() {
            return true;
        }

        /**
         * Integers only, and only when the removed values lie strictly between the total's
         * extremes: then the extremes are still some remaining row's, and every sum is exact.
         */
        @Override
        public S subtract(S total, S removed) {
            if (!(total instanceof One t) || !(removed instanceof One r) || !t.integral() || !r.integral()) return null;
            if (compareNumbers(r.min, t.min) <= 0 || compareNumbers(r.max, t.max) >= 0) return null;
            return new One(minus(t.sum, r.sum), minus(t.count, r.count), t.min, t.max, minus(t.sumsqr, r.sumsqr));
        }

        private static JsonNode minus(JsonNode a, JsonNode b) {
            return integer(a.bigIntegerValue().subtract(b.bigIntegerValue()));
        }

        @Override
        public byte[] encode(S p) {
            return switch (p) {
                case One o -> Tuple.from("s", number(o.sum), number(o.count), number(o.min), number(o.max), number(o.sumsqr)).pack();
                case Many m -> {
                    Tuple t = Tuple.from("m");
                    for (One o : m.elements) t = t.add(Tuple.from(number(o.sum), number(o.count), number(o.min), number(o.max), number(o.sumsqr)));
                    yield t.pack();
                }
                case Bad b -> {
                    Tuple t = Tuple.from("f", b.reason);
                    for (int shape : b.shapes) t = t.add(shape);
                    yield t.pack();
                }
            };
        }

        @Override
        public S decode(byte[] bytes) {
            Tuple t = Tuple.fromBytes(bytes);
            return switch (t.getString(0)) {
                case "s" -> one(t, 1);
                case "m" -> {
                    List<One> out = new ArrayList<>();
                    for (int i = 1; i < t.size(); i++) out.add(one(t.getNestedTuple(i), 0));
                    yield new Many(out);
                }
                default -> {
                    java.util.SortedSet<Integer> shapes = new java.util.TreeSet<>();
                    for (int i = 2; i < t.size(); i++) shapes.add((int) t.getLong(i));
                    yield new Bad(t.getString(1), java.util.Collections.unmodifiableSortedSet(shapes));
                }
            };
        }

        private static One one(Tuple t, int at) {
            return new One(node(t.get(at)), node(t.get(at + 1)), node(t.get(at + 2)), node(t.get(at + 3)), node(t.get(at + 4)));
        }

        @Override
        public JsonNode finish(S p) {
            return switch (p) {
                case One o -> o.toJson();
                case Many m -> {
                    ArrayNode a = Json.NODES.arrayNode();
                    for (One o : m.elements) a.add(o.toJson());
                    yield a;
                }
                case Bad b -> {
                    List<String> shapes = new ArrayList<>();
                    for (int shape : b.shapes) shapes.add(shape < 0 ? "numbers" : "arrays of " + shape);
                    throw new ViewException(ViewException.Kind.REDUCE_ERROR, "invalid_value", b.reason != null ? b.reason
                            : "The _stats function requires that map values be numbers, or arrays of numbers of one length, not "
                            + String.join(" and ", shapes));
                }
            };
        }
    }

    /** A JSON number as a tuple element: long, BigInteger or double, so it decodes to the same number. */
    static Object number(JsonNode n) {
        if (n.isIntegralNumber()) return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
        return n.doubleValue();
    }

    static JsonNode node(Object o) {
        return switch (o) {
            case Long l -> Json.NODES.numberNode(l);
            case BigInteger b -> integer(b);
            case Double d -> Json.NODES.numberNode(d);
            case Float f -> Json.NODES.numberNode(f.doubleValue());
            default -> throw new IllegalStateException("not a stored number: " + o);
        };
    }

    // ---------------------------------------------------------------- _approx_count_distinct

    /**
     * HyperLogLog over the keys' JSON, precision 11 like CouchDB's couch_hyper (2,048 registers,
     * about 2 % standard error), with linear counting for small sets, where it is exact in practice.
     * A partial is its registers; merging takes each register's maximum.
     */
    static final class Distinct implements Reducer<byte[]> {
        static final int P = 11;
        static final int M = 1 << P;

        @Override
        public byte[] reduce(List<Row> rows) {
            byte[] registers = new byte[M];
            for (Row r : rows) {
                long h = hash(r.keyJson().getBytes(StandardCharsets.UTF_8));
                int idx = (int) (h >>> (64 - P));
                int rank = Long.numberOfLeadingZeros((h << P) | (1L << (P - 1))) + 1;
                if (rank > registers[idx]) registers[idx] = (byte) rank;
            }
            return registers;
        }

        @Override
        public byte[] rereduce(List<byte[]> parts) {
            byte[] out = parts.getFirst().clone();
            for (int p = 1; p < parts.size(); p++) {
                byte[] r = parts.get(p);
                for (int i = 0; i < M; i++) if (r[i] > out[i]) out[i] = r[i];
            }
            return out;
        }

        /** Sparse (index and rank per set register) while that is smaller, else the 2,048 registers. */
        @Override
        public byte[] encode(byte[] registers) {
            int set = 0;
            for (byte b : registers) if (b != 0) set++;
            if (3 * set + 1 >= M + 1) return ByteBuffer.allocate(M + 1).put((byte) 1).put(registers).array();
            ByteBuffer out = ByteBuffer.allocate(1 + 3 * set).put((byte) 0);
            for (int i = 0; i < M; i++) if (registers[i] != 0) out.putShort((short) i).put(registers[i]);
            return out.array();
        }

        @Override
        public byte[] decode(byte[] bytes) {
            if (bytes[0] == 1) return Arrays.copyOfRange(bytes, 1, M + 1);
            byte[] registers = new byte[M];
            ByteBuffer in = ByteBuffer.wrap(bytes, 1, bytes.length - 1);
            while (in.hasRemaining()) {
                int i = in.getShort() & 0xffff;
                registers[i] = in.get();
            }
            return registers;
        }

        @Override
        public JsonNode finish(byte[] registers) {
            double sum = 0;
            int zeros = 0;
            for (byte r : registers) {
                sum += Math.pow(2, -r);
                if (r == 0) zeros++;
            }
            double alpha = 0.7213 / (1 + 1.079 / M);
            double e = alpha * M * M / sum;
            if (e <= 2.5 * M && zeros > 0) e = M * Math.log((double) M / zeros);
            return Json.NODES.numberNode(Math.round(e));
        }

        /** FNV-1a, then MurmurHash3's 64-bit finalizer so every bit depends on every input bit. */
        static long hash(byte[] b) {
            long h = 0xcbf29ce484222325L;
            for (byte x : b) {
                h ^= x & 0xff;
                h *= 0x100000001b3L;
            }
            h ^= h >>> 33;
            h *= 0xff51afd7ed558ccdL;
            h ^= h >>> 33;
            h *= 0xc4ceb9fe1a85ec53L;
            h ^= h >>> 33;
            return h;
        }
    }

    // ---------------------------------------------------------------- _top_N, _bottom_N

    /**
     * The N greatest ({@code _top_N}) or least ({@code _bottom_N}) values in view collation,
     * greatest or least first. As CouchDB 3.5 merges with {@code lists:umerge}, values that collate
     * equal count once; of those the one with the smallest JSON text is kept.
     */
    static final class Rank implements Reducer<List<JsonNode>> {
        private final int n;
        private final Comparator<JsonNode> order;

        Rank(boolean top, int n) {
            this.n = n;
            Comparator<JsonNode> collation = top ? (a, b) -> ViewCollation.compare(b, a) : ViewCollation::compare;
            this.order = collation.thenComparing(Json::write);
        }

        @Override
        public List<JsonNode> reduce(List<Row> rows) {
            List<JsonNode> values = new ArrayList<>(rows.size());
            for (Row r : rows) values.add(r.value());
            return best(values);
        }

        @Override
        public List<JsonNode> rereduce(List<List<JsonNode>> parts) {
            List<JsonNode> all = new ArrayList<>();
            for (List<JsonNode> p : parts) all.addAll(p);
            return best(all);
        }

        private List<JsonNode> best(List<JsonNode> values) {
            values.sort(order);
            List<JsonNode> out = new ArrayList<>(Math.min(n, values.size()));
            for (JsonNode v : values) {
                if (out.size() == n) break;
                if (!out.isEmpty() && ViewCollation.compare(out.getLast(), v) == 0) continue;
                out.add(v);
            }
            return out;
        }

        @Override
        public byte[] encode(List<JsonNode> p) {
            ArrayNode a = Json.NODES.arrayNode();
            p.forEach(a::add);
            return jsonBytes(a);
        }

        @Override
        public List<JsonNode> decode(byte[] bytes) {
            List<JsonNode> out = new ArrayList<>();
            parse(bytes).forEach(out::add);
            return out;
        }

        @Override
        public JsonNode finish(List<JsonNode> p) {
            ArrayNode a = Json.NODES.arrayNode();
            p.forEach(a::add);
            return a;
        }
    }

    // ---------------------------------------------------------------- _first, _last

    /**
     * The value of the group's first ({@code _first}) or last ({@code _last}) row: CouchDB 3.5
     * compares rows by key in view collation, then doc id; rows of one document under one key
     * come in index order. A partial is the row's place in the index and its value.
     */
    static final class Pick implements Reducer<Pick.At> {
        record At(byte[] position, String valueJson) {}

        private final boolean first;

        Pick(boolean first) {
            this.first = first;
        }

        @Override
        public At reduce(List<Row> rows) {
            Row r = first ? rows.getFirst() : rows.getLast();
            return new At(r.suffix(), r.valueJson());
        }

        @Override
        public At rereduce(List<At> parts) {
            At best = parts.getFirst();
            for (At p : parts) {
                int c = Arrays.compareUnsigned(p.position, best.position);
                if (first ? c < 0 : c > 0) best = p;
            }
            return best;
        }

        @Override
        public byte[] encode(At p) {
            return Tuple.from(p.position, p.valueJson).pack();
        }

        @Override
        public At decode(byte[] bytes) {
            Tuple t = Tuple.fromBytes(bytes);
            return new At(t.getBytes(0), t.getString(1));
        }

        @Override
        public JsonNode finish(At p) {
            return parse(p.valueJson.getBytes(StandardCharsets.UTF_8));
        }
    }

    // ---------------------------------------------------------------- JSON


    static byte[] jsonBytes(JsonNode n) {
        try {
            return Json.MAPPER.writeValueAsBytes(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode parse(byte[] json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("a stored reduction is not JSON", e);
        }
    }
}
