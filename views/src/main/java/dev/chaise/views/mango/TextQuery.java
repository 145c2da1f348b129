package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A normalized selector as a Lucene query over the fields a Mango {@code nouveau} index makes
 * ({@link NouveauFields}), as CouchDB 3.5's {@code mango_selector_text} writes it: each condition
 * becomes a query on the field named by its path and the type of its argument
 * ({@code age:number}, escaped: {@code age_3anumber}), number ranges are ranges, and what
 * Lucene cannot say ({@code $type}, {@code $regex}, comparisons with arrays, objects or null, and
 * string ranges, whose order differs) becomes "the field exists" over the {@code $fieldnames} field. The query only finds candidates:
 * every hit is matched against the selector afterwards, as in CouchDB.
 */
final class TextQuery {
    /** mango_util's NUMSTRING: a value that reads as a number is not escaped (but quoted) by CouchDB. */
    private static final Pattern NUMBER_LIKE = Pattern.compile(
            "[\\x00-\\x20]*[+-]?(NaN|Infinity|((((\\p{N}+)(\\.)?((\\p{N}+)?)([eE][+-]?(\\p{N}+))?)|(\\.((\\p{N}+))([eE][+-]?(\\p{N}+))?)"
                    + "|(((0[xX]([0-9a-fA-F]+)(\\.)?)|(0[xX]([0-9a-fA-F]+)?(\\.)([0-9a-fA-F]+)))[pP][+-]?(\\p{N}+)))[fFdD]?))[\\x00-\\x20]*");
    private static final String ARRAY = "[]";
    private static final String SPECIALS = "+-(){}[]!^~*?:/\\\" \t\r\n";

    private TextQuery() {}

    /** The abstract query: mango_selector_text's tuples. */
    sealed interface Q permits And, Or, Not, Term, NullTerm, FieldNames, Regex, Default, Approx {}

    /**
     * Finds more documents than the condition matches (array equality by length and elements,
     * {@code $elemMatch}, {@code $type}, ...). Harmless alone, since the selector decides, but a
     * negation of it would drop documents that match: such a negation keeps only "the field exists".
     */
    record Approx(Q q) implements Q {}

    record And(List<Q> args) implements Q {}

    record Or(List<Q> args) implements Q {}

    /** @param arg null for {@code $exists: false}, which has nothing to subtract from "any field" */
    record Not(Q exists, Q arg) implements Q {}

    /** {@code name} is the unescaped field ({@code a.b:string}), {@code value} already Lucene syntax. */
    record Term(String name, String value) implements Q {}

    /** {@code $eq: null}: a term on the {@code :null} field, kept apart because it names no user field. */
    record NullTerm(String name, String value) implements Q {}

    /** A field name pattern on {@code $fieldnames}: {@code name} unescaped, {@code wildcard} appended as it is. */
    record FieldNames(String name, String wildcard) implements Q {}

    /** {@code $regex}, and a range of strings: any string value at the path. */
    record Regex(String path) implements Q {}

    /** {@code $text}: a phrase on the {@code $default} field. */
    record Default(String value) implements Q {}

    /** The query string; empty when the selector leaves nothing to ask (CouchDB then answers no document). */
    static String convert(Selector s) {
        return query(tree(s.toJson()));
    }

    static Q tree(JsonNode selector) {
        return convert(List.of(), selector);
    }

    // ---------------------------------------------------------------- selector to tree

    private static Q convert(List<String> path, JsonNode sel) {
        if (!sel.isObject()) {
            if (sel.isTextual() || sel.isNumber() || sel.isBoolean()) return term(path, sel, value(sel));
            return new Approx(exists(path)); // null or an array where a value was expected: CouchDB fails; any value at the path is a safe superset
        }
        if (sel.size() != 1) { // a value, not a selector ($eq's object, $all's elements): each member, or "present" for {}
            List<Q> parts = new ArrayList<>();
            for (Map.Entry<String, JsonNode> m : sel.properties()) parts.add(convert(path, one(m.getKey(), m.getValue())));
            return new Approx(parts.isEmpty() ? exists(path) : new And(parts));
        }
        Map.Entry<String, JsonNode> e = sel.properties().iterator().next();
        String op = e.getKey();
        JsonNode arg = e.getValue();
        return switch (op) {
            case "$and" -> new And(each(path, arg));
            case "$or" -> new Or(each(path, arg));
            case "$not" -> not(path, convert(path, arg));
            case "$default" -> {
                if (!(convert(path, arg) instanceof Term t)) throw invalid("$default");
                yield new Default(t.value());
            }
            case "$text" -> {
                if (!arg.isTextual()) throw invalid(op);
                yield new Term(field(path, arg), value(arg));
            }
            case "$all" -> {
                if (arg.size() == 1 && arg.get(0).isArray()) {
                    // [[...]]: the field is that array, or holds it; the matcher decides which
                    JsonNode eq = eq(arg.get(0));
                    yield new Approx(new Or(List.of(convert(path, eq), convert(under(path), eq))));
                }
                yield new Approx(new And(each(under(path), arg)));
            }
            case "$elemMatch", "$allMatch" -> new Approx(convert(under(path), arg));
            case "$lt", "$lte", "$gt", "$gte" -> {
                if (arg.isArray() || arg.isObject() || arg.isNull()) yield new Approx(exists(path));
                // Lucene orders terms by their bytes, Mango strings by ICU collation (apple < Apple < b):
                // no term range holds exactly the strings the selector wants, so ask for any string
                if (arg.isTextual()) yield new Approx(new Regex(str(path)));
                yield new Term(field(path, arg), range(op, arg));
            }
            case "$eq" -> {
                if (arg.isNull()) yield new NullTerm(field(path, arg), "true");
                if (arg.isArray()) {
                    List<String> inner = under(path);
                    List<Q> parts = new ArrayList<>();
                    parts.add(new Term(str(inner) + ":length", Integer.toString(arg.size())));
                    for (JsonNode a : arg) parts.add(convert(inner, eq(a)));
                    yield new Approx(new And(parts)); // the order and repeats of the elements are the matcher's
                }
                if (arg.isObject()) yield new Approx(convert(path, arg)); // its members below the path; the object may hold more
                yield term(path, arg, value(arg));
            }
            case "$ne" -> not(path, convert(path, eq(arg)));
            case "$in" -> new Or(in(path, arg));
            case "$nin" -> not(path, new Or(in(path, arg)));
            case "$exists" -> arg.booleanValue() ? exists(path) : new Not(exists(path), null);
            case "$beginsWith" -> arg.textValue().isEmpty()
                    ? new FieldNames(str(path) + ":", "string") // any string: a bare "*" is a leading wildcard Lucene refuses
                    : new Term(field(path, arg), escape(arg.textValue()) + "*");
            case "$type" -> new Approx(exists(path));
            case "$mod" -> new Approx(new FieldNames(str(path) + ":", "number"));
            case "$regex" -> new Approx(new Regex(str(path)));
            case "$size" -> new Term(str(under(path)) + ":length", value(arg));
            default -> {
                if (op.startsWith("$")) throw invalid(op); // $keyMapMatch: no Lucene query for it
                yield named(path, op, arg);
            }
        };
    }

    /**
     * "The field is there and the condition does not hold": the condition's documents subtracted,
     * when its query finds exactly them (CouchDB subtracts in every case, so {@code $not} of
     * {@code $mod}, {@code $regex} or {@code $elemMatch} finds nothing there).
     */
    private static Q not(List<String> path, Q cond) {
        return exact(cond) ? new Not(exists(path), cond) : new Approx(exists(path));
    }

    private static boolean exact(Q q) {
        return switch (q) {
            case Approx a -> false;
            case And a -> a.args().stream().allMatch(TextQuery::exact);
            case Or o -> o.args().stream().allMatch(TextQuery::exact);
            case Not n -> n.arg() == null || exact(n.arg());
            case Default d -> false;
            case Term t -> true;
            case NullTerm t -> true;
            case FieldNames f -> true;
            case Regex r -> false;
        };
    }

    /** A field name: its segments appended to the path; with array positions ({@code a.0}) also as {@code a.[]}, either may match. */
    private static Q named(List<String> path, String name, JsonNode cond) {
        List<String> segs = name.isEmpty() ? List.of() : Selector.parseField(name);
        List<String> asIs = new ArrayList<>(path);
        asIs.addAll(segs);
        List<String> arrays = new ArrayList<>(path);
        boolean positions = false;
        for (String s : segs) {
            boolean n = isInteger(s);
            positions |= n;
            arrays.add(n ? ARRAY : s);
        }
        if (!positions) return convert(asIs, cond);
        return new Approx(new Or(List.of(convert(asIs, cond), convert(arrays, cond))));
    }

    private static boolean isInteger(String s) {
        if (s.isEmpty()) return false;
        int i = s.charAt(0) == '-' || s.charAt(0) == '+' ? 1 : 0;
        if (i == s.length()) return false;
        for (; i < s.length(); i++) if (!Character.isDigit(s.charAt(i))) return false;
        return true;
    }

    private static List<Q> each(List<String> path, JsonNode args) {
        List<Q> out = new ArrayList<>();
        for (JsonNode a : args) out.add(convert(path, a));
        return out;
    }

    /** Each value at the path itself or as an element of an array there. */
    private static List<Q> in(List<String> path, JsonNode args) {
        List<Q> out = new ArrayList<>();
        for (JsonNode a : args) {
            if (a.isObject()) {
                List<Q> parts = new ArrayList<>();
                for (Map.Entry<String, JsonNode> m : a.properties()) {
                    JsonNode one = one(m.getKey(), m.getValue());
                    parts.add(new Or(List.of(convert(path, one), convert(under(path), one))));
                }
                out.add(new Or(parts));
            } else if (a.isArray() || a.isNull()) {
                out.add(new Approx(exists(path))); // CouchDB fails here; "present" is a superset the matcher narrows
            } else {
                out.add(new Or(List.of(term(path, a, value(a)), term(under(path), a, value(a)))));
            }
        }
        return out;
    }

    private static JsonNode eq(JsonNode v) {
        return one("$eq", v);
    }

    private static JsonNode one(String key, JsonNode v) {
        return Json.NODES.objectNode().set(key, v);
    }

    private static Term term(List<String> path, JsonNode arg, String value) {
        // a term may not start with "-" (Lucene's prohibit); CouchDB writes it bare and the query fails
        return new Term(field(path, arg), value.startsWith("-") ? "\\" + value : value);
    }

    private static List<String> under(List<String> path) {
        List<String> p = new ArrayList<>(path);
        p.add(ARRAY);
        return p;
    }

    /** "Some value is at the path": a field named {@code path:<type>} or one below it, {@code path.<...>}. */
    private static Q exists(List<String> path) {
        String p = str(path);
        return new Or(List.of(new FieldNames(p + ":", "*"), new FieldNames(p, ".*")));
    }

    private static MangoException invalid(String op) {
        return new MangoException("invalid_operator", "Invalid text operator: " + op);
    }

    /** The path's segments joined by dots, a dot within a segment escaped ({@code a\.b}), as Mango names fields. */
    private static String str(List<String> path) {
        StringBuilder b = new StringBuilder();
        for (String s : path) {
            if (s.isEmpty()) continue;
            if (!b.isEmpty()) b.append('.');
            b.append(s.replace(".", "\\."));
        }
        return b.toString();
    }

    private static String field(List<String> path, JsonNode arg) {
        return str(path) + ":" + type(arg);
    }

    private static String type(JsonNode v) {
        if (v.isNumber()) return "number";
        if (v.isBoolean()) return "boolean";
        if (v.isTextual()) return "string";
        return "null";
    }

    /** A value as Lucene reads it: strings quoted (and escaped), numbers as written, booleans and null as words. */
    static String value(JsonNode v) {
        if (v.isTextual()) {
            String s = v.textValue();
            // CouchDB leaves number-like strings unescaped; a quote or backslash would break the phrase, so those two are escaped always
            String body = NUMBER_LIKE.matcher(s).find() ? s.replace("\\", "\\\\").replace("\"", "\\\"") : escape(s);
            return "\"" + body + "\"";
        }
        if (v.isIntegralNumber()) return v.bigIntegerValue().toString();
        if (v.isNumber()) return new BigDecimal(v.asText()).stripTrailingZeros().toPlainString();
        if (v.isBoolean()) return v.booleanValue() ? "true" : "false";
        return "true"; // null: the :null field holds "true"
    }

    /** A range over a number field; numbers order alike in Lucene and Mango. */
    private static String range(String op, JsonNode arg) {
        String v = value(arg);
        return switch (op) {
            case "$lt" -> "[* TO " + v + "}";
            case "$lte" -> "[* TO " + v + "]";
            case "$gte" -> "[" + v + " TO *]";
            default -> "{" + v + " TO *]";
        };
    }

    /** mango_util:lucene_escape_query_value: Lucene's special characters and whitespace after a backslash. */
    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ((c == '&' || c == '|') && i + 1 < s.length() && s.charAt(i + 1) == c) {
                b.append('\\').append(c).append(c);
                i++;
            } else if (SPECIALS.indexOf(c) >= 0) {
                b.append('\\').append(c);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * mango_util:lucene_escape_user: a Mango field name ({@code a.b:string}) as an index field name:
     * each segment's UTF-8 bytes other than ASCII letters and digits written {@code _xx}.
     */
    static String escapeUser(String name) {
        List<String> segs = Selector.parseField(name);
        StringBuilder b = new StringBuilder();
        for (String s : segs) {
            if (!b.isEmpty()) b.append('.');
            b.append(escapeSegment(s));
        }
        return b.toString();
    }

    static String escapeSegment(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) b.append((char) c);
            else b.append('_').append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 15, 16));
        }
        return b.toString();
    }

    // ---------------------------------------------------------------- tree to string

    static String query(Q q) {
        return String.join("", parts(q));
    }

    private static List<String> parts(Q q) {
        return switch (q) {
            case Approx a -> parts(a.q());
            case And a -> joined(a.args(), " AND ");
            case Or o -> joined(o.args(), " OR ");
            case Not n when n.arg() == null -> List.of("($fieldnames:/.*/ ", " AND NOT (", query(n.exists()), "))");
            case Not n -> {
                String inner = query(n.arg());
                yield inner.isEmpty() ? List.of("(", query(n.exists()), ")") : List.of("(", query(n.exists()), " AND NOT (", inner, "))");
            }
            case Term t -> List.of("(", escapeUser(t.name()), ":", t.value(), ")");
            case NullTerm t -> List.of("(", escapeUser(t.name()), ":", t.value(), ")");
            case FieldNames f -> List.of("($fieldnames:", escapeUser(f.name()), f.wildcard(), ")");
            case Regex r -> List.of("($fieldnames:", escapeUser(r.path() + ":"), "string)");
            case Default d -> List.of("($default:", d.value(), ")");
        };
    }

    /** Empty parts (an empty {@code $in}) are dropped, and a group left with none is nothing. */
    private static List<String> joined(List<Q> args, String sep) {
        List<String> parts = new ArrayList<>();
        for (Q a : args) {
            String s = query(a);
            if (!s.isEmpty() && !s.equals("()")) parts.add(s);
        }
        if (parts.isEmpty()) return List.of();
        return List.of("(", String.join(sep, parts), ")");
    }

    // ---------------------------------------------------------------- index usability

    /**
     * mango_idx_nouveau:indexable_fields: the index fields ({@code name:type}, {@code $default})
     * the query needs; existence tests over {@code $fieldnames} need none, and {@code $exists: false} none at all.
     */
    static Set<String> indexableFields(Selector s) {
        Set<String> out = new LinkedHashSet<>();
        if (!s.isEmpty()) fields(tree(s.toJson()), out);
        return out;
    }

    /** Whether a field name ({@code a.[]:string}) runs through an array's elements. */
    private static boolean underArray(String name) {
        List<String> segs = Selector.parseField(name);
        for (String s : segs) if (s.equals(ARRAY) || s.startsWith(ARRAY + ":")) return true;
        return false;
    }

    private static void fields(Q q, Set<String> out) {
        switch (q) {
            case Approx a -> fields(a.q(), out);
            case And a -> a.args().forEach(x -> fields(x, out));
            case Or o when o.args().size() == 2 && o.args().get(0) instanceof Term first && o.args().get(1) instanceof Term second -> {
                // a value or an element ($in, a.0): the index declares only the field itself
                fields(first, out);
                if (!underArray(second.name())) fields(second, out);
            }
            case Or o -> o.args().forEach(x -> fields(x, out));
            case Not n -> {
                if (n.arg() == null) {
                    out.clear(); // CouchDB's fold starts again from nothing here
                } else {
                    fields(n.exists(), out);
                    fields(n.arg(), out);
                }
            }
            case Term t -> {
                if (!t.name().endsWith(":length")) out.add(t.name()); // array lengths are the index's own fields
            }
            case NullTerm t -> { }
            case FieldNames f -> { }
            case Regex r -> out.add(r.path() + ":string");
            case Default d -> out.add("$default");
        }
    }
}
