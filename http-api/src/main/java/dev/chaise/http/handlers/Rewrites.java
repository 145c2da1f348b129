package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.http.HttpError;
import dev.chaise.storage.json.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A design document's {@code rewrites} rules ({@code chttpd_rewrite}): the first rule whose
 * {@code method} and {@code from} match the path after {@code _rewrite} gives the new target. A
 * rule's path is {@code /}-separated: {@code :name} binds one segment, {@code *} as the last of
 * {@code from} takes the rest, which {@code *} in {@code to} puts back. The bindings (path
 * variables, then the request's query) fill {@code to}'s variables and the rule's {@code query}
 * (whose {@code :name} and {@code *} strings are replaced, {@code formats} turning a value into an
 * {@code int} or {@code bool}); everything bound goes on as the new query, the keys of view
 * queries as JSON. The result is relative to the design document and normalized.
 */
final class Rewrites {
    /** Query parameters that are JSON, decoded when read and encoded when written. */
    private static final Set<String> JSON_KEYS = Set.of("key", "startkey", "start_key", "endkey", "end_key", "keys");
    private static final String ALL = "*";

    private Rewrites() {}

    /** A path segment of a rule: a literal, or a variable ({@code :name}, and {@code *}). */
    private record Token(String text, boolean variable) {}

    private record Rule(String method, List<Token> from, List<Token> to, List<Map.Entry<String, JsonNode>> query, JsonNode formats) {}

    /** One binding: a variable's name and its value. */
    private record Binding(String name, JsonNode value) {}

    /**
     * The new target for {@code parts} (the path after {@code _rewrite}), or null if no rule
     * matches.
     *
     * @param prefix {@code /{db}/_design/{name}}, percent-encoded
     * @param secure CouchDB's {@code [chttpd] secure_rewrites}: no rule may climb above the database
     */
    static String target(JsonNode rules, String method, List<String> parts, Map<String, List<String>> query, String prefix, boolean secure) {
        List<Rule> parsed = new ArrayList<>();
        for (JsonNode r : rules) if (r.isObject()) parsed.add(rule(r, secure));
        List<Binding> queryBindings = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : query.entrySet()) {
            for (String v : e.getValue()) queryBindings.add(new Binding(e.getKey(), JSON_KEYS.contains(e.getKey()) ? decode(v) : TextNode.valueOf(v)));
        }
        for (Rule r : parsed) {
            if (!r.method().equals(ALL) && !r.method().equals(method)) continue;
            List<Binding> bindings = new ArrayList<>();
            List<String> remaining = bind(r.from(), parts, bindings);
            if (remaining == null) continue;
            bindings.addAll(queryBindings);
            List<Binding> ruleQuery = new ArrayList<>();
            for (Map.Entry<String, JsonNode> q : r.query()) ruleQuery.add(new Binding(q.getKey(), fill(q.getValue(), bindings, r.formats())));
            List<Binding> all = new ArrayList<>();
            for (Binding b : bindings) if (ruleQuery.stream().noneMatch(q -> q.name().equals(b.name()))) all.add(b);
            all.addAll(ruleQuery);
            return prefixed(prefix, newPath(r.to(), all, remaining), all);
        }
        return null;
    }

    private static Rule rule(JsonNode r, boolean secure) {
        JsonNode to = r.get("to");
        if (to == null || !to.isTextual()) throw new HttpError(500, "error", "invalid_rewrite_target");
        List<Map.Entry<String, JsonNode>> query = new ArrayList<>();
        if (r.path("query").isObject()) query.addAll(r.get("query").properties());
        JsonNode from = r.get("from");
        return new Rule(r.path("method").isTextual() ? r.get("method").textValue() : ALL,
                from != null && from.isTextual() ? tokens(from.textValue(), secure) : List.of(new Token(ALL, true)),
                tokens(to.textValue(), secure), query, r.path("formats"));
    }

    /** A rule's path; a third {@code ..} is refused when rewrites are secure. */
    private static List<Token> tokens(String path, boolean secure) {
        List<Token> out = new ArrayList<>();
        int dotDots = 0;
        for (String p : path.split("/", -1)) {
            if (p.isEmpty()) continue;
            if (p.equals("..") && ++dotDots > 2 && secure) throw new HttpError(500, "insecure_rewrite_rule", "too many ../.. segments");
            if (p.equals(ALL)) out.add(new Token(ALL, true));
            else if (p.startsWith(":")) out.add(new Token(p.substring(1), true));
            else out.add(new Token(p, false));
        }
        return out;
    }

    /** Matches {@code from} against the path: the segments {@code *} took (empty if none), or null. */
    private static List<String> bind(List<Token> from, List<String> parts, List<Binding> bindings) {
        int i = 0;
        for (int t = 0; t < from.size(); t++) {
            Token tok = from.get(t);
            if (tok.variable() && tok.text().equals(ALL) && t == from.size() - 1) return parts.subList(i, parts.size());
            if (i == parts.size()) return null;
            String seg = parts.get(i++);
            if (tok.variable()) bindings.addFirst(new Binding(tok.text(), TextNode.valueOf(seg)));
            else if (!tok.text().equals(seg)) return null;
        }
        return i == parts.size() ? List.of() : null;
    }

    /** A rule's query value with its variables replaced. */
    private static JsonNode fill(JsonNode v, List<Binding> bindings, JsonNode formats) {
        if (v.isTextual()) return variable(v.textValue(), bindings, formats);
        if (v.isArray()) {
            ArrayNode out = Json.NODES.arrayNode();
            for (JsonNode e : v) out.add(e.isTextual() && e.textValue().startsWith(":") ? variable(e.textValue(), bindings, formats) : e);
            return out;
        }
        return v;
    }

    private static JsonNode variable(String s, List<Binding> bindings, JsonNode formats) {
        String name;
        if (s.equals(ALL)) name = ALL;
        else if (s.startsWith(":")) name = s.substring(1);
        else return TextNode.valueOf(s);
        JsonNode value = TextNode.valueOf(s);
        for (Binding b : bindings) {
            if (b.name().equals(name)) {
                value = b.value();
                break;
            }
        }
        String format = formats.path(name).asText("");
        if (format.equals("int") && value.isTextual()) {
            try {
                return IntNode.valueOf(Integer.parseInt(value.textValue()));
            } catch (NumberFormatException e) {
                return value;
            }
        }
        if (format.equals("bool") && value.isTextual()) {
            String l = value.textValue().toLowerCase(java.util.Locale.ROOT);
            if (l.equals("true") || l.equals("false")) return BooleanNode.valueOf(l.equals("true"));
        }
        return value;
    }

    /** {@code to} with its variables filled; {@code *} ends it with the segments {@code from}'s {@code *} took. */
    private static List<String> newPath(List<Token> to, List<Binding> bindings, List<String> remaining) {
        List<String> out = new ArrayList<>();
        for (Token t : to) {
            if (t.variable() && t.text().equals(ALL)) {
                out.addAll(remaining);
                return out;
            }
            if (!t.variable()) {
                out.add(t.text());
                continue;
            }
            String v = "undefined";
            for (Binding b : bindings) {
                if (b.name().equals(t.text())) {
                    v = text(b.value());
                    break;
                }
            }
            out.add(v);
        }
        return out;
    }

    /** The new target: the prefix, the path's segments encoded and normalized, then every binding as the query. */
    private static String prefixed(String prefix, List<String> path, List<Binding> bindings) {
        StringBuilder p = new StringBuilder(prefix);
        for (String s : path) p.append('/').append(quotePlus(s));
        StringBuilder q = new StringBuilder();
        for (Binding b : bindings.reversed()) {
            if (b.name().equals(ALL)) continue;
            String v = JSON_KEYS.contains(b.name()) ? Json.write(b.value()) : text(b.value());
            q.append(q.isEmpty() ? "" : "&").append(quotePlus(b.name())).append('=').append(quotePlus(v));
        }
        String normalized = normalize(p.toString());
        return q.isEmpty() ? normalized : normalized + "?" + q;
    }

    /** chttpd_rewrite's normalize_path: {@code .} dropped, {@code ..} takes the segment before it. */
    static String normalize(String path) {
        Deque<String> out = new ArrayDeque<>();
        for (String s : path.split("/")) {
            if (s.isEmpty() || s.equals(".")) continue;
            if (s.equals("..") && !out.isEmpty() && !out.peekLast().equals("..")) out.removeLast();
            else out.addLast(s);
        }
        return "/" + String.join("/", out);
    }

    private static String text(JsonNode v) {
        return v.isTextual() ? v.textValue() : Json.write(v);
    }

    private static String quotePlus(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static JsonNode decode(String v) {
        try {
            JsonNode n = Json.MAPPER.readTree(v);
            return n == null || n.isMissingNode() ? TextNode.valueOf(v) : n;
        } catch (java.io.IOException e) {
            throw HttpError.badRequest(dev.chaise.http.ErrorMapper.INVALID_JSON);
        }
    }
}
