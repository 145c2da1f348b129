package dev.chaise.views.search;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A {@code _nouveau} query's parameters, checked as {@code nouveau_httpd} checks them: from the
 * query string of a GET (JSON-valued parameters as JSON text) or the body of a POST.
 *
 * @param sort field names ({@code -name} descending, {@code relevance}), or null: relevance, then id
 * @param counts string fields to count values of, or null
 * @param ranges per double field, labelled ranges to count, or null
 * @param partition the partition of a partitioned database the hits keep to ({@code /_partition/{p}/...}), or null
 */
public record SearchRequest(String q, String locale, int limit, List<String> sort, List<String> counts,
                            Map<String, List<Range>> ranges, int topN, boolean update, String bookmark, boolean includeDocs,
                            String partition) {

    static final int LIMIT_DEFAULT = 25;
    static final int TOP_N_DEFAULT = 10;

    /** A labelled range; a missing bound is open. */
    public record Range(String label, Double min, boolean minInclusive, Double max, boolean maxInclusive) {}

    /** From a GET's query string: {@code param} gives a parameter's text or null. */
    public static SearchRequest fromQuery(Function<String, String> param) {
        String q = param.apply("q");
        if (q == null) throw SearchException.queryParse("q parameter is mandatory");
        return new SearchRequest(q, param.apply("locale"),
                intParam("limit", param.apply("limit"), LIMIT_DEFAULT),
                sort(json(param.apply("sort"))), strings("counts", json(param.apply("counts"))), ranges(json(param.apply("ranges"))),
                intParam("top_n", param.apply("top_n"), TOP_N_DEFAULT),
                bool("update", param.apply("update"), true), param.apply("bookmark"), bool("include_docs", param.apply("include_docs"), false), null);
    }

    /** From a POST's JSON body. */
    public static SearchRequest fromBody(JsonNode body) {
        JsonNode q = body.get("q");
        if (q == null || q.isNull()) throw SearchException.queryParse("q parameter is mandatory");
        if (!q.isTextual()) throw invalid("query", q);
        JsonNode locale = body.get("locale");
        if (locale != null && !locale.isNull() && !locale.isTextual()) throw invalid("locale", locale);
        JsonNode bookmark = body.get("bookmark");
        return new SearchRequest(q.textValue(), locale == null || locale.isNull() ? null : locale.textValue(),
                intMember("limit", body.get("limit"), LIMIT_DEFAULT), sort(body.get("sort")), strings("counts", body.get("counts")),
                ranges(body.get("ranges")), intMember("top_n", body.get("top_n"), TOP_N_DEFAULT),
                boolMember("update", body.get("update"), true),
                bookmark == null || bookmark.isNull() ? null : bookmark.isTextual() ? bookmark.textValue() : bookmark.toString(),
                boolMember("include_docs", body.get("include_docs"), false), null);
    }

    /**
     * The same query kept to {@code partition} (null: as it is): from the query string for GET and
     * POST alike, as nouveau_httpd reads it, which {@code /_partition/{p}/...} sets.
     */
    public SearchRequest inPartition(String partition) {
        return partition == null ? this : new SearchRequest(q, locale, limit, sort, counts, ranges, topN, update, bookmark, includeDocs, partition);
    }

    private static JsonNode json(String text) {
        if (text == null) return null;
        try {
            return Json.MAPPER.readTree(text);
        } catch (java.io.IOException e) {
            throw SearchException.queryParse("Invalid JSON: " + text);
        }
    }

    private static SearchException invalid(String name, Object v) {
        return SearchException.queryParse("Invalid value for " + name + ": " + v);
    }

    private static int intParam(String name, String v, int dflt) {
        if (v == null) return dflt;
        try {
            return positive(name, Integer.parseInt(v));
        } catch (NumberFormatException e) {
            throw SearchException.queryParse(name + " parameter must be an integer");
        }
    }

    private static int intMember(String name, JsonNode v, int dflt) {
        if (v == null || v.isNull()) return dflt;
        if (!v.isIntegralNumber() || !v.canConvertToInt()) throw invalid(name, v);
        return positive(name, v.intValue());
    }

    private static int positive(String name, int n) {
        if (n <= 0) throw SearchException.queryParse(name + " parameter must be greater than zero");
        return n;
    }

    private static boolean bool(String name, String v, boolean dflt) {
        if (v == null) return dflt;
        return switch (v) {
            case "true" -> true;
            case "false" -> false;
            default -> throw invalid(name, "\"" + v + "\"");
        };
    }

    private static boolean boolMember(String name, JsonNode v, boolean dflt) {
        if (v == null || v.isNull()) return dflt;
        if (!v.isBoolean()) throw invalid(name, v);
        return v.booleanValue();
    }

    private static List<String> sort(JsonNode v) {
        if (v == null || v.isNull()) return null;
        if (v.isTextual()) return List.of(v.textValue());
        return strings("sort", v);
    }

    private static List<String> strings(String name, JsonNode v) {
        if (v == null || v.isNull()) return null;
        if (!v.isArray()) throw SearchException.queryParse(name + " parameter must be a list of strings");
        List<String> out = new ArrayList<>();
        for (JsonNode s : v) {
            if (!s.isTextual()) throw SearchException.queryParse("all items in " + name + " parameter must be strings");
            out.add(s.textValue());
        }
        return out;
    }

    private static Map<String, List<Range>> ranges(JsonNode v) {
        if (v == null || v.isNull()) return null;
        if (!v.isObject()) throw invalid("ranges", v);
        Map<String, List<Range>> out = new LinkedHashMap<>();
        for (var e : v.properties()) {
            if (!e.getValue().isArray()) throw SearchException.queryParse("range values must be lists of objects");
            List<Range> list = new ArrayList<>();
            for (JsonNode r : e.getValue()) {
                if (!r.isObject()) throw SearchException.queryParse("all values in ranges parameter must be objects");
                JsonNode label = r.get("label");
                if (label == null || !label.isTextual()) throw SearchException.badRequest("a range needs a string label");
                list.add(new Range(label.textValue(), bound(r.get("min")), r.path("min_inclusive").asBoolean(true),
                        bound(r.get("max")), r.path("max_inclusive").asBoolean(true)));
            }
            out.put(e.getKey(), list);
        }
        return out;
    }

    private static Double bound(JsonNode n) {
        if (n == null || n.isNull()) return null;
        if (!n.isNumber()) throw SearchException.badRequest("a range's min and max must be numbers");
        return n.doubleValue();
    }
}
