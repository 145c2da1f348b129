package dev.chaise.views.mango;

import dev.chaise.views.collation.RawOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigInteger;
import java.util.ArrayList;
import dev.chaise.views.collation.ViewCollation;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

/**
 * A Mango selector, normalized as CouchDB normalizes it and matched against JSON documents.
 *
 * <p>Normalization matters for results, not only for index selection, so it follows Mango's three
 * steps: operators are validated and implicit ones made explicit ({@code {"a": 1}} is
 * {@code {"a": {"$eq": 1}}}, several members are an {@code $and}); field names are pushed down
 * through {@code $and/$or/$not/$nor} and nested objects become dotted paths
 * ({@code {"a": {"b": 1}}} matches {@code a.b == 1}); negations are pushed to the terminals
 * (De Morgan, {@code $not $gt} is {@code $lte}, ...). The last step is why
 * {@code {"$not": {"a": {"$gt": 1}}}} does not match a document without {@code a}: a terminal on
 * a missing field is false, except {@code $exists: false}.
 *
 * <p>Comparisons use CouchDB's view collation, except under a field named {@code _id}, which
 * compares in Erlang's term order ({@link RawOrder}) as Mango's {@code cmp_raw} does; pass another
 * {@link Comparator} to {@link #matches(JsonNode, Comparator)} for the rest. It also answers what
 * CouchDB's index selection asks of a selector ({@link #fields}, {@link #hasRequiredFields},
 * {@link #isConstantField}, {@link #indexableFields}, {@link #range}). Immutable and thread-safe.
 */
public final class Selector {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Set<String> UNSUPPORTED = Set.of("$where", "$geoWithin", "$geoIntersects", "$near", "$nearSphere");

    sealed interface Node permits And, Or, Not, Nor, Named, Field, Op, Sub, Text {}

    record And(List<Node> args) implements Node {}

    record Or(List<Node> args) implements Node {}

    record Not(Node arg) implements Node {}

    record Nor(List<Node> args) implements Node {}

    /** A member name before it is split into a path. */
    record Named(String name, Node cond) implements Node {}

    /** @param name the path as Mango spells it (names joined by dots, escapes kept): what indexes and sorts name */
    record Field(String name, List<String> path, Node cond) implements Node {
        boolean isId() {
            return name.equals("_id");
        }
    }

    /**
     * A terminal operator; {@code regex} is compiled once for {@code $regex}, with RE2/J: matching
     * takes time linear in the value, so no pattern can hold a request (a backtracking engine
     * takes exponential time on {@code (a+)+b}). RE2 has no backreferences or lookaround: such a
     * pattern is refused as a bad argument (docs/compatibility.md).
     */
    record Op(String op, JsonNode arg, Pattern regex) implements Node {}

    /** {@code $elemMatch}, {@code $allMatch}, {@code $keyMapMatch}: a selector applied to elements or keys. */
    record Sub(String op, Node sel) implements Node {}

    /** {@code $text}, which only a text index can answer; Mango's matcher lets it pass. */
    record Text(JsonNode arg) implements Node {}

    private final Node root; // null: the empty selector, which matches everything

    private Selector(Node root) {
        this.root = root;
    }

    /** Validates and normalizes; throws {@link MangoException} with Mango's error and reason. */
    public static Selector parse(JsonNode json) {
        if (json == null || !json.isObject()) {
            throw new MangoException("invalid_selector_json", "Selector must be a JSON object, not: " + json);
        }
        if (json.isEmpty()) return new Selector(null);
        Node n = normNegations(normFields(normOps(json), List.of(), ""));
        if (n instanceof Field f && f.path().isEmpty()) {
            throw new MangoException("invalid_selector", "One or more conditions is missing a field name.");
        }
        return new Selector(n);
    }

    public boolean isEmpty() {
        return root == null;
    }

    public boolean matches(JsonNode doc) {
        return matches(doc, ViewCollation::compare);
    }

    public boolean matches(JsonNode doc, Comparator<JsonNode> collation) {
        return root == null || match(root, doc, collation);
    }

    /** The normalized selector, in Mango's own notation (dotted paths). */
    public JsonNode toJson() {
        return root == null ? NODES.objectNode() : json(root);
    }

    @Override
    public String toString() {
        return toJson().toString();
    }

    // ---------------------------------------------------------------- step 1: operators

    private static Node normOps(JsonNode v) {
        if (!v.isObject() || v.isEmpty()) return new Op("$eq", v, null); // a bare value means equality
        if (v.size() > 1) {
            List<Node> parts = new ArrayList<>(v.size());
            for (Map.Entry<String, JsonNode> e : v.properties()) parts.add(normOps(NODES.objectNode().set(e.getKey(), e.getValue())));
            return new And(parts);
        }
        Map.Entry<String, JsonNode> e = v.properties().iterator().next();
        String k = e.getKey();
        JsonNode arg = e.getValue();
        return switch (k) {
            case "$and" -> new And(list(k, arg));
            case "$or" -> new Or(list(k, arg));
            case "$nor" -> new Nor(list(k, arg));
            case "$not" -> {
                if (!arg.isObject()) throw badArg(k, arg);
                yield new Not(normOps(arg));
            }
            case "$in", "$nin", "$all" -> {
                if (!arg.isArray()) throw badArg(k, arg);
                yield new Op(k, arg, null);
            }
            case "$exists" -> {
                if (!arg.isBoolean()) throw badArg(k, arg);
                yield new Op(k, arg, null);
            }
            case "$type", "$beginsWith" -> {
                if (!arg.isTextual()) throw badArg(k, arg);
                yield new Op(k, arg, null);
            }
            case "$mod" -> {
                if (!arg.isArray() || arg.size() != 2 || !arg.get(0).isIntegralNumber() || !arg.get(1).isIntegralNumber()
                        || arg.get(0).bigIntegerValue().signum() == 0) {
                    throw badArg(k, arg); // a zero divisor would fail every match; refuse it up front
                }
                yield new Op(k, arg, null);
            }
            case "$regex" -> {
                if (!arg.isTextual()) throw badArg(k, arg);
                try {
                    yield new Op(k, arg, Pattern.compile(arg.textValue()));
                } catch (PatternSyntaxException ex) {
                    throw badArg(k, arg);
                }
            }
            case "$size" -> {
                if (!arg.isIntegralNumber() || arg.bigIntegerValue().signum() < 0) throw badArg(k, arg);
                yield new Op(k, arg, null);
            }
            case "$elemMatch", "$allMatch", "$keyMapMatch" -> {
                if (!arg.isObject()) throw badArg(k, arg);
                yield new Sub(k, normOps(arg));
            }
            case "$text" -> {
                if (!(arg.isTextual() || arg.isNumber() || arg.isBoolean())) throw badArg(k, arg);
                yield new Text(arg);
            }
            case "$default" -> { // Mango's own internal form of $text, accepted back
                if (!(arg.isObject() && arg.size() == 1 && arg.has("$text"))) throw badField(v);
                yield new Text(arg.get("$text"));
            }
            case "$lt", "$lte", "$eq", "$ne", "$gte", "$gt" -> new Op(k, arg, null);
            default -> {
                if (UNSUPPORTED.contains(k)) throw new MangoException("not_supported", "Unsupported operator: " + k);
                if (k.startsWith("$")) throw new MangoException("invalid_operator", "Invalid operator: " + k);
                yield new Named(k, normOps(arg));
            }
        };
    }

    private static List<Node> list(String op, JsonNode arg) {
        if (!arg.isArray()) throw badArg(op, arg);
        List<Node> out = new ArrayList<>(arg.size());
        for (JsonNode a : arg) out.add(normOps(a));
        return out;
    }

    private static MangoException badArg(String op, JsonNode arg) {
        return new MangoException("bad_arg", "Bad argument for operator " + op + ": " + arg);
    }

    private static MangoException badField(JsonNode sel) {
        return new MangoException("bad_field", "Invalid field normalization on selector: " + sel);
    }

    // ---------------------------------------------------------------- step 2: field paths

    private static Node normFields(Node n, List<String> path, String name) {
        return switch (n) {
            case And a -> new And(a.args().stream().map(x -> normFields(x, path, name)).toList());
            case Or o -> new Or(o.args().stream().map(x -> normFields(x, path, name)).toList());
            case Nor o -> new Nor(o.args().stream().map(x -> normFields(x, path, name)).toList());
            case Not x -> new Not(normFields(x.arg(), path, name));
            case Sub s -> new Field(name, path, new Sub(s.op(), normFields(s.sel(), List.of(), "")));
            case Text t -> {
                if (!path.isEmpty()) throw badField(NODES.objectNode().set("$default", NODES.objectNode().set("$text", t.arg())));
                yield t;
            }
            case Op op -> new Field(name, path, op);
            case Named f -> {
                List<String> p = new ArrayList<>(path);
                p.addAll(parseField(f.name()));
                yield normFields(f.cond(), List.copyOf(p), name.isEmpty() ? f.name() : name + "." + f.name());
            }
            case Field f -> f;
        };
    }

    /** {@code a.b} is two segments, {@code a\.b} one; an empty segment is an error. */
    static List<String> parseField(String name) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '\\' && i + 1 < name.length() && name.charAt(i + 1) == '.') {
                cur.append('.');
                i++;
            } else if (c == '\\') {
                // Mango drops backslashes that escape nothing
            } else if (c == '.') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        for (String s : out) {
            if (s.isEmpty()) throw new MangoException("invalid_field_name", "Invalid field name: " + name);
        }
        return out;
    }

    // ---------------------------------------------------------------- step 3: negations

    private static Node normNegations(Node n) {
        return switch (n) {
            case Not x -> negate(x.arg());
            case Nor o -> new And(o.args().stream().map(Selector::negate).toList());
            case And a -> new And(a.args().stream().map(Selector::normNegations).toList());
            case Or o -> new Or(o.args().stream().map(Selector::normNegations).toList());
            default -> n;
        };
    }

    private static Node negate(Node n) {
        return switch (n) {
            case Not x -> normNegations(x.arg());
            case Nor o -> new Or(o.args().stream().map(Selector::normNegations).toList());
            case And a -> new Or(a.args().stream().map(Selector::negate).toList());
            case Or o -> new And(o.args().stream().map(Selector::negate).toList());
            case Text t -> throw badArg("$not", NODES.objectNode().set("$default", NODES.objectNode().set("$text", t.arg())));
            case Op op -> switch (op.op()) {
                case "$lt" -> new Op("$gte", op.arg(), null);
                case "$lte" -> new Op("$gt", op.arg(), null);
                case "$eq" -> new Op("$ne", op.arg(), null);
                case "$ne" -> new Op("$eq", op.arg(), null);
                case "$gte" -> new Op("$lt", op.arg(), null);
                case "$gt" -> new Op("$lte", op.arg(), null);
                case "$in" -> new Op("$nin", op.arg(), null);
                case "$nin" -> new Op("$in", op.arg(), null);
                case "$exists" -> new Op("$exists", NODES.booleanNode(!op.arg().booleanValue()), null);
                default -> new Not(op);
            };
            case Sub s -> new Not(s);
            case Field f -> new Field(f.name(), f.path(), negate(f.cond()));
            case Named f -> new Named(f.name(), negate(f.cond()));
        };
    }

    // ---------------------------------------------------------------- matching

    private static final Object NOT_FOUND = new Object();
    private static final Object BAD_PATH = new Object();

    private static boolean match(Node n, JsonNode v, Comparator<JsonNode> cmp) {
        return switch (n) {
            case And a -> {
                for (Node x : a.args()) if (!match(x, v, cmp)) yield false;
                yield true;
            }
            case Or o -> {
                if (o.args().isEmpty()) yield true; // Mango: an empty $or matches
                for (Node x : o.args()) if (match(x, v, cmp)) yield true;
                yield false;
            }
            case Nor o -> {
                for (Node x : o.args()) if (match(x, v, cmp)) yield false;
                yield true;
            }
            case Not x -> !match(x.arg(), v, cmp);
            case Field f -> {
                Object found = lookup(v, f.path());
                if (found == NOT_FOUND) yield f.cond() instanceof Op op && op.op().equals("$exists") && !op.arg().booleanValue();
                if (found == BAD_PATH) yield false;
                // Mango compares _id as Erlang terms, not by view collation (PouchDB's test.issue66).
                yield match(f.cond(), (JsonNode) found, f.isId() ? RawOrder::compare : cmp);
            }
            case Op op -> matchOp(op, v, cmp);
            case Sub s -> matchSub(s, v, cmp);
            case Text t -> true;
            case Named f -> throw new IllegalStateException("unnormalized selector");
        };
    }

    private static Object lookup(JsonNode v, List<String> path) {
        JsonNode cur = v;
        for (String seg : path) {
            if (cur.isObject()) {
                JsonNode next = cur.get(seg);
                if (next == null) return NOT_FOUND;
                cur = next;
            } else if (cur.isArray()) {
                int i = arrayIndex(seg);
                if (i < 0 || i >= cur.size()) return BAD_PATH;
                cur = cur.get(i);
            } else {
                return BAD_PATH;
            }
        }
        return cur;
    }

    /** The value at {@code path} (array positions as numbers), or null if it is missing or the path runs through a scalar. */
    static JsonNode get(JsonNode doc, List<String> path) {
        Object v = lookup(doc, path);
        return v instanceof JsonNode n ? n : null;
    }

    private static int arrayIndex(String seg) {
        try {
            return Integer.parseInt(seg);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean matchOp(Op op, JsonNode v, Comparator<JsonNode> cmp) {
        JsonNode arg = op.arg();
        return switch (op.op()) {
            case "$lt" -> cmp.compare(v, arg) < 0;
            case "$lte" -> cmp.compare(v, arg) <= 0;
            case "$eq" -> cmp.compare(v, arg) == 0;
            case "$ne" -> cmp.compare(v, arg) != 0;
            case "$gte" -> cmp.compare(v, arg) >= 0;
            case "$gt" -> cmp.compare(v, arg) > 0;
            case "$in" -> in(arg, v, cmp);
            case "$nin" -> {
                if (arg.isEmpty()) yield true;
                if (v.isArray()) yield !in(arg, v, cmp);
                for (JsonNode a : arg) if (cmp.compare(v, a) == 0) yield false;
                yield true;
            }
            case "$exists" -> arg.booleanValue(); // reached only when the field is there
            case "$type" -> arg.textValue().equals(type(v));
            case "$mod" -> {
                if (!v.isIntegralNumber()) yield false;
                // Erlang's rem: the sign follows the dividend, as BigInteger.remainder.
                yield v.bigIntegerValue().remainder(arg.get(0).bigIntegerValue()).equals(arg.get(1).bigIntegerValue());
            }
            case "$regex" -> v.isTextual() && op.regex().matcher(v.textValue()).find();
            case "$beginsWith" -> v.isTextual() && v.textValue().startsWith(arg.textValue());
            case "$size" -> v.isArray() && BigInteger.valueOf(v.size()).equals(arg.bigIntegerValue());
            case "$all" -> {
                if (arg.isEmpty() || !v.isArray()) yield false;
                boolean all = true;
                for (JsonNode a : arg) {
                    if (!contains(v, a)) {
                        all = false;
                        break;
                    }
                }
                yield all || (arg.size() == 1 && arg.get(0).isArray() && same(arg.get(0), v));
            }
            default -> throw new MangoException("invalid_operator", "Invalid operator: " + op.op());
        };
    }

    private static boolean in(JsonNode args, JsonNode v, Comparator<JsonNode> cmp) {
        for (JsonNode a : args) {
            if (v.isArray()) {
                for (JsonNode e : v) if (cmp.compare(e, a) == 0) return true;
            } else if (cmp.compare(v, a) == 0) {
                return true;
            }
        }
        return false;
    }

    private static boolean matchSub(Sub s, JsonNode v, Comparator<JsonNode> cmp) {
        return switch (s.op()) {
            case "$elemMatch" -> {
                if (!v.isArray()) yield false;
                for (JsonNode e : v) if (match(s.sel(), e, cmp)) yield true;
                yield false;
            }
            case "$allMatch" -> {
                if (!v.isArray() || v.isEmpty()) yield false;
                for (JsonNode e : v) if (!match(s.sel(), e, cmp)) yield false;
                yield true;
            }
            default -> { // $keyMapMatch
                if (!v.isObject()) yield false;
                for (Iterator<String> it = v.fieldNames(); it.hasNext(); ) {
                    if (match(s.sel(), TextNode.valueOf(it.next()), cmp)) yield true;
                }
                yield false;
            }
        };
    }

    /** Mango's type names, as {@code $type} takes them. */
    static String type(JsonNode v) {
        if (v.isNull()) return "null";
        if (v.isBoolean()) return "boolean";
        if (v.isNumber()) return "number";
        if (v.isTextual()) return "string";
        if (v.isArray()) return "array";
        return "object";
    }

    private static boolean contains(JsonNode array, JsonNode x) {
        for (JsonNode e : array) if (same(e, x)) return true;
        return false;
    }

    /**
     * Exact equality as Erlang's {@code =:=} sees decoded JSON ({@code $all} uses it): an integer
     * never equals a float, whatever Jackson node class holds either.
     */
    static boolean same(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            if (a.isIntegralNumber() != b.isIntegralNumber()) return false;
            return a.isIntegralNumber() ? a.bigIntegerValue().equals(b.bigIntegerValue()) : a.doubleValue() == b.doubleValue();
        }
        if (a.getNodeType() != b.getNodeType()) return false;
        if (a.isArray()) {
            if (a.size() != b.size()) return false;
            for (int i = 0; i < a.size(); i++) if (!same(a.get(i), b.get(i))) return false;
            return true;
        }
        if (a.isObject()) {
            if (a.size() != b.size()) return false;
            for (Map.Entry<String, JsonNode> e : a.properties()) {
                JsonNode o = b.get(e.getKey());
                if (o == null || !same(e.getValue(), o)) return false;
            }
            return true;
        }
        return a.equals(b);
    }

    // ---------------------------------------------------------------- what index selection reads

    /** The normalized tree, null for the empty selector; for the planner. */
    Node root() {
        return root;
    }

    /** Field names the selector's conditions name at the top ({@code mango_selector:fields}), in order, repeats kept. */
    List<String> fields() {
        List<String> out = new ArrayList<>();
        if (root != null) fields(root, out);
        return out;
    }

    private static void fields(Node n, List<String> out) {
        switch (n) {
            case And a -> a.args().forEach(x -> fields(x, out));
            case Or o -> o.args().forEach(x -> fields(x, out));
            case Nor o -> o.args().forEach(x -> fields(x, out));
            case Field f -> out.add(f.name());
            case Text t -> out.add("$default");
            default -> { }
        }
    }

    /**
     * Whether every matching document has each of {@code required} ({@code has_required_fields}):
     * seen through {@code $and}, and through {@code $or} when every branch requires the field;
     * {@code $exists: false} requires nothing.
     */
    boolean hasRequiredFields(List<String> required) {
        if (root == null) return required.isEmpty();
        return remaining(List.of(root), new ArrayList<>(required)).isEmpty();
    }

    private static List<String> remaining(List<Node> nodes, List<String> required) {
        if (required.isEmpty() || nodes.isEmpty()) return required;
        Node first = nodes.getFirst();
        List<Node> rest = nodes.subList(1, nodes.size());
        return switch (first) {
            case And a -> remaining(rest, remaining(a.args(), required));
            // CouchDB counts an empty $or as requiring every field, yet it matches every document: an
            // index it picks that way misses documents without its columns. It requires nothing here.
            case Or o when o.args().isEmpty() -> remaining(rest, required);
            case Or o -> {
                java.util.TreeSet<String> left = new java.util.TreeSet<>();
                for (Node x : o.args()) left.addAll(remaining(List.of(x), new ArrayList<>(required)));
                yield remaining(rest, new ArrayList<>(left));
            }
            case Field f -> {
                if (!(f.cond() instanceof Op op && op.op().equals("$exists") && !op.arg().booleanValue())) required.remove(f.name());
                yield remaining(rest, required);
            }
            case Text t -> {
                required.remove("$default");
                yield remaining(rest, required);
            }
            default -> remaining(rest, required);
        };
    }

    /** Whether the selector pins {@code field} to one value ({@code $eq}) at the top or under {@code $and}. */
    boolean isConstantField(String field) {
        return root != null && constant(root, field);
    }

    private static boolean constant(Node n, String field) {
        return switch (n) {
            case And a -> a.args().stream().anyMatch(x -> constant(x, field));
            case Field f -> f.name().equals(field) && f.cond() instanceof Op op && op.op().equals("$eq");
            default -> false;
        };
    }

    private static final Set<String> INDEXABLE = Set.of("$lt", "$lte", "$eq", "$gt", "$gte", "$beginsWith", "$exists");

    /**
     * Fields a view index can narrow its scan by ({@code indexable_fields}): those under
     * {@code $and} with a comparison, {@code $beginsWith} or {@code $exists}; nothing under
     * {@code $or}, {@code $in} or a negation. Sorted by their UTF-8 bytes, without repeats.
     */
    List<String> indexableFields() {
        java.util.TreeSet<String> out = new java.util.TreeSet<>(RawOrder::compareStrings);
        if (root != null) indexable(root, out);
        return List.copyOf(out);
    }

    private static void indexable(Node n, java.util.Set<String> out) {
        switch (n) {
            case And a -> a.args().forEach(x -> indexable(x, out));
            case Field f -> {
                if (f.cond() instanceof Op op && INDEXABLE.contains(op.op())) out.add(f.name());
            }
            default -> { }
        }
    }

    /** A {@code $text} search, which only a text index answers. */
    boolean isTextSearch() {
        return root != null && text(root);
    }

    private static boolean text(Node n) {
        return switch (n) {
            case Text t -> true;
            case And a -> a.args().stream().anyMatch(Selector::text);
            case Or o -> o.args().stream().anyMatch(Selector::text);
            case Nor o -> o.args().stream().anyMatch(Selector::text);
            case Not x -> text(x.arg());
            default -> false;
        };
    }

    /**
     * Mango's "noop range": a selector that is only {@code $and: []} or {@code $or: []} reads
     * nothing ({@code mango_cursor:maybe_noop_range}), though the matcher would accept every
     * document.
     */
    boolean noopRange() {
        return (root instanceof And a && a.args().isEmpty()) || (root instanceof Or o && o.args().isEmpty());
    }

    /**
     * The range of values of {@code field} that matching documents can have, from the comparisons
     * under {@code $and} (Mango's {@code mango_idx_view:range}, by view collation); null when the
     * comparisons contradict each other (empty).
     */
    ColumnRange range(String field) {
        ColumnRange r = ColumnRange.ALL;
        return root == null ? r : range(root, field, r);
    }

    private static ColumnRange range(Node n, String field, ColumnRange r) {
        return switch (n) {
            case And a -> {
                ColumnRange x = r;
                for (Node arg : a.args()) {
                    x = range(arg, field, x);
                    if (x == null) break;
                }
                yield x;
            }
            case Field f when f.name().equals(field) && f.cond() instanceof Op op -> r.narrow(op.op(), op.arg());
            default -> r;
        };
    }

    // ---------------------------------------------------------------- rendering

    private static JsonNode json(Node n) {
        return switch (n) {
            case And a -> NODES.objectNode().set("$and", array(a.args()));
            case Or o -> NODES.objectNode().set("$or", array(o.args()));
            case Nor o -> NODES.objectNode().set("$nor", array(o.args()));
            case Not x -> NODES.objectNode().set("$not", json(x.arg()));
            case Named f -> NODES.objectNode().set(f.name(), json(f.cond()));
            case Field f -> NODES.objectNode().set(f.name(), json(f.cond()));
            case Op op -> NODES.objectNode().set(op.op(), op.arg());
            case Sub s -> NODES.objectNode().set(s.op(), json(s.sel()));
            case Text t -> NODES.objectNode().set("$default", NODES.objectNode().set("$text", t.arg()));
        };
    }

    private static ArrayNode array(List<Node> nodes) {
        ArrayNode a = NODES.arrayNode();
        for (Node n : nodes) a.add(json(n));
        return a;
    }
}
