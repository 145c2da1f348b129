package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.ViewException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** CouchDB's built-in reduce functions, in Java: {@code _count}, {@code _sum}, {@code _stats}, {@code _approx_count_distinct}. */
public final class BuiltinReducers {
    static final String SUM_ERROR = "The _sum function requires that map values be numbers, arrays of numbers, or objects. "
            + "Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values "
            + "for all fields are themselves numbers, arrays of numbers, or objects.";

    private BuiltinReducers() {}

    public static Reducer of(String name) {
        return switch (name) {
            case "_count" -> Count::new;
            case "_sum" -> Sum::new;
            case "_stats" -> Stats::new;
            case "_approx_count_distinct" -> Distinct::new;
            default -> throw new ViewException(ViewException.Kind.QUERY_PARSE_ERROR, "Unknown builtin reduce function: " + name);
        };
    }

    // ---------------------------------------------------------------- _count

    static final class Count implements Reducer.Accumulator {
        private long n;

        @Override
        public void add(JsonNode key, String docId, JsonNode value) {
            n++;
        }

        @Override
        public void addReduced(JsonNode reduced) {
            n += reduced.asLong();
        }

        @Override
        public JsonNode result() {
            return Json.NODES.numberNode(n);
        }
    }

    // ---------------------------------------------------------------- _sum

    /** Numbers, arrays of numbers (element-wise, the shorter padded) and objects (by member, nested), as couch_query_servers sums. */
    static final class Sum implements Reducer.Accumulator {
        private JsonNode acc = Json.NODES.numberNode(0);
        private JsonNode error;

        @Override
        public void add(JsonNode key, String docId, JsonNode value) {
            addReduced(value);
        }

        @Override
        public void addReduced(JsonNode v) {
            if (error != null) return;
            if (v.isObject() && "builtin_reduce_error".equals(v.path("error").asText(null))) {
                error = v;
                return;
            }
            try {
                acc = sum(v, acc);
            } catch (SumError e) {
                ObjectNode o = Json.NODES.objectNode();
                o.put("error", "builtin_reduce_error");
                o.put("reason", SUM_ERROR);
                o.set("caused_by", e.cause);
                error = o;
            }
        }

        @Override
        public JsonNode result() {
            return error != null ? error : acc;
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
                if (acc.isNumber() && acc.asLong() == 0 && acc.isIntegralNumber()) return v;
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

    /** Integers add exactly (as Erlang's bignums do); anything else as doubles. */
    static JsonNode plus(JsonNode a, JsonNode b) {
        if (a.isIntegralNumber() && b.isIntegralNumber()) {
            if (a.canConvertToLong() && b.canConvertToLong()) {
                long x = a.longValue();
                long y = b.longValue();
                long r = x + y;
                if (((x ^ r) & (y ^ r)) >= 0) return Json.NODES.numberNode(r);
            }
            BigInteger r = a.bigIntegerValue().add(b.bigIntegerValue());
            return r.bitLength() < 64 ? Json.NODES.numberNode(r.longValue()) : Json.NODES.numberNode(r);
        }
        return Json.NODES.numberNode(a.doubleValue() + b.doubleValue());
    }

    static JsonNode multiply(JsonNode a, JsonNode b) {
        if (a.isIntegralNumber() && b.isIntegralNumber()) {
            BigInteger r = a.bigIntegerValue().multiply(b.bigIntegerValue());
            return r.bitLength() < 64 ? Json.NODES.numberNode(r.longValue()) : Json.NODES.numberNode(r);
        }
        return Json.NODES.numberNode(a.doubleValue() * b.doubleValue());
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

    /** {sum, count, min, max, sumsqr}, per element for arrays of numbers; accepts pre-reduced stats objects. */
    static final class Stats implements Reducer.Accumulator {
        private Object acc; // Stat, or List<Stat> for arrays

        record Stat(JsonNode sum, JsonNode count, JsonNode min, JsonNode max, JsonNode sumsqr) {
            static Stat of(JsonNode x) {
                return new Stat(x, Json.NODES.numberNode(1), x, x, multiply(x, x));
            }

            Stat merged(Stat o) {
                return new Stat(plus(sum, o.sum), plus(count, o.count), compareNumbers(o.min, min) < 0 ? o.min : min,
                        compareNumbers(o.max, max) > 0 ? o.max : max, plus(sumsqr, o.sumsqr));
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

        @Override
        public void add(JsonNode key, String docId, JsonNode value) {
            addReduced(value);
        }

        @Override
        public void addReduced(JsonNode v) {
            Object x = unpack(v);
            if (acc == null) {
                acc = x;
                return;
            }
            acc = merge(acc, x, v);
        }

        private static Object unpack(JsonNode v) {
            if (v.isNumber()) return Stat.of(v);
            if (v.isArray()) {
                List<Stat> l = new ArrayList<>();
                for (JsonNode e : v) {
                    if (e.isNumber()) l.add(Stat.of(e));
                    else if (e.isObject()) l.add(stat(e));
                    else throw invalid(e);
                }
                return l;
            }
            if (v.isObject()) return stat(v);
            throw invalid(v);
        }

        @SuppressWarnings("unchecked")
        private static Object merge(Object a, Object b, JsonNode raw) {
            if (a instanceof Stat x && b instanceof Stat y) return x.merged(y);
            if (a instanceof List<?> xs && b instanceof List<?> ys) {
                // CouchDB merges arrays with lists:zipwith, which fails on lists of different
                // lengths: the query fails (500), rather than one list deciding.
                if (xs.size() != ys.size()) {
                    throw new ViewException(ViewException.Kind.REDUCE_ERROR, "invalid_value",
                            "The _stats function requires that arrays of map values have the same length, not " + xs.size() + " and " + ys.size());
                }
                List<Stat> out = new ArrayList<>();
                for (int i = 0; i < xs.size(); i++) out.add(((Stat) xs.get(i)).merged((Stat) ys.get(i)));
                return out;
            }
            throw invalid(raw);
        }

        private static Stat stat(JsonNode o) {
            return new Stat(number(o, "sum"), number(o, "count"), number(o, "min"), number(o, "max"), number(o, "sumsqr"));
        }

        private static JsonNode number(JsonNode o, String field) {
            JsonNode n = o.get(field);
            if (n == null) throw new ViewException(ViewException.Kind.REDUCE_ERROR, "invalid_value",
                    "user _stats input missing required field " + field + " (" + o + ")");
            if (!n.isNumber()) throw new ViewException(ViewException.Kind.REDUCE_ERROR, "invalid_value",
                    "non-numeric _stats input received for " + field + ": " + n);
            return n;
        }

        private static ViewException invalid(JsonNode v) {
            return new ViewException(ViewException.Kind.REDUCE_ERROR, "invalid_value",
                    "The _stats function requires that map values be numbers or arrays of numbers, not '" + v + "'");
        }

        @Override
        @SuppressWarnings("unchecked")
        public JsonNode result() {
            if (acc == null) {
                Stat zero = new Stat(Json.NODES.numberNode(0), Json.NODES.numberNode(0), Json.NODES.numberNode(0),
                        Json.NODES.numberNode(0), Json.NODES.numberNode(0));
                return zero.toJson();
            }
            if (acc instanceof Stat s) return s.toJson();
            ArrayNode out = Json.NODES.arrayNode();
            for (Stat s : (List<Stat>) acc) out.add(s.toJson());
            return out;
        }
    }

    // ---------------------------------------------------------------- _approx_count_distinct

    /**
     * HyperLogLog over the keys, precision 11 like CouchDB's couch_hyper (2,048 registers, about
     * 2 % standard error), with linear counting for small sets, where it is exact in practice.
     */
    static final class Distinct implements Reducer.Accumulator {
        static final int P = 11;
        static final int M = 1 << P;
        private final byte[] registers = new byte[M];

        @Override
        public void add(JsonNode key, String docId, JsonNode value) {
            long h = hash(key.toString().getBytes(StandardCharsets.UTF_8));
            int idx = (int) (h >>> (64 - P));
            int rank = Long.numberOfLeadingZeros((h << P) | (1L << (P - 1))) + 1;
            if (rank > registers[idx]) registers[idx] = (byte) rank;
        }

        @Override
        public void addReduced(JsonNode reduced) {
            throw new UnsupportedOperationException("an estimate cannot be merged; partial reductions must keep registers");
        }

        @Override
        public JsonNode result() {
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
}
