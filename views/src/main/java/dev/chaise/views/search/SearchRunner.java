package dev.chaise.views.search;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.text.NumberFormat;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.lucene.document.Document;
import org.apache.lucene.facet.FacetResult;
import org.apache.lucene.facet.Facets;
import org.apache.lucene.facet.FacetsCollector;
import org.apache.lucene.facet.FacetsCollectorManager;
import org.apache.lucene.facet.LabelAndValue;
import org.apache.lucene.facet.StringDocValuesReaderState;
import org.apache.lucene.facet.StringValueFacetCounts;
import org.apache.lucene.facet.range.DoubleRange;
import org.apache.lucene.facet.range.DoubleRangeFacetCounts;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.IndexableField;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.queryparser.flexible.core.QueryNodeException;
import org.apache.lucene.queryparser.flexible.standard.StandardQueryParser;
import org.apache.lucene.queryparser.flexible.standard.config.PointsConfig;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MultiCollectorManager;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSortField;
import org.apache.lucene.search.SortedSetSortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopFieldCollectorManager;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.util.BytesRef;

/**
 * One Nouveau query over an index's reader: Lucene's standard query syntax (numbers in the
 * request's locale for ranges on {@code double} fields; {@code default} as the default field),
 * sorted by relevance or the fields asked for with the id last, a page after the bookmark's
 * position, stored fields, and counts and ranges facets, answered in Nouveau's shape.
 */
public final class SearchRunner {
    private static final Pattern SORT_FIELD = Pattern.compile("^([-+])?([.\\w]+)$");
    /** Hits counted exactly before {@code total_hits_relation} becomes a lower bound, as Nouveau counts. */
    private static final int TOTAL_HITS_THRESHOLD = 1000;

    private SearchRunner() {}

    /** A hit: its id, its position in the sort ({@code order}, typed values), its stored fields. */
    public record Hit(String id, ArrayNode order, ObjectNode fields) {}

    /** The response's members; {@code counts} and {@code ranges} null when not asked for. */
    public record Result(long totalHits, String totalHitsRelation, List<Hit> hits, String bookmark,
                         Map<String, Map<String, Number>> counts, Map<String, Map<String, Number>> ranges, long updateLatency) {}

    /**
     * Standard query parsers over one index's analyzers, kept for reuse (a parser is not thread
     * safe, so each query takes one of its own): making one builds its whole processor pipeline.
     */
    static final class Parsers {
        private static final int KEPT = 16;
        private final SearchIndexDef def;
        private final ConcurrentLinkedQueue<StandardQueryParser> idle = new ConcurrentLinkedQueue<>();

        Parsers(SearchIndexDef def) {
            this.def = def;
        }

        StandardQueryParser take() {
            StandardQueryParser qp = idle.poll();
            if (qp != null) return qp;
            qp = new StandardQueryParser(Analyzers.of(def));
            qp.setEnablePositionIncrements(true);
            return qp;
        }

        void give(StandardQueryParser qp) {
            if (idle.size() < KEPT) idle.offer(qp);
        }
    }

    /** @param schema the reader's commit's field types; @param parsers the index's */
    static Result run(DirectoryReader reader, IndexedFields.Schema schema, Parsers parsers, SearchRequest req, long latency) throws IOException {
        ArrayNode previous = unpack(req.bookmark());
        if (reader == null) { // update=false on an index never built: empty, as a new Nouveau index is
            return new Result(0, TotalHits.Relation.EQUAL_TO.name(), List.of(), pack(previous), req.counts() == null ? null : Map.of(),
                    req.ranges() == null ? null : Map.of(), latency);
        }
        Query query = parse(parsers, schema, req);
        Sort sort = sort(schema, req.sort());
        FieldDoc after = previous == null || previous.isEmpty() ? null : after(previous, sort);
        IndexSearcher searcher = new IndexSearcher(reader);
        boolean facets = req.counts() != null || req.ranges() != null;
        TopFieldCollectorManager hits = new TopFieldCollectorManager(sort, req.limit(), after, TOTAL_HITS_THRESHOLD);
        Object[] results;
        try {
            results = facets ? searcher.search(query, new MultiCollectorManager(hits, new FacetsCollectorManager()))
                    : new Object[] {searcher.search(query, hits)};
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw SearchException.badRequest(e.getMessage());
        }
        TopDocs top = (TopDocs) results[0];
        List<Hit> out = new ArrayList<>(top.scoreDocs.length);
        StoredFields stored = searcher.storedFields();
        for (ScoreDoc sd : top.scoreDocs) {
            Document d = stored.document(sd.doc);
            ObjectNode fields = Json.NODES.objectNode();
            for (IndexableField f : d.getFields()) {
                if (f.name().equals(IndexedFields.ID)) continue;
                JsonNode v = f.numericValue() != null ? Json.NODES.numberNode(f.numericValue().doubleValue()) : Json.NODES.textNode(f.stringValue());
                JsonNode was = fields.get(f.name());
                if (was == null) fields.set(f.name(), v);
                else if (was.isArray()) ((ArrayNode) was).add(v);
                else fields.set(f.name(), Json.NODES.arrayNode().add(was).add(v));
            }
            out.add(new Hit(d.get(IndexedFields.ID), order((FieldDoc) sd), fields));
        }
        Map<String, Map<String, Number>> counts = null;
        Map<String, Map<String, Number>> ranges = null;
        if (facets) {
            FacetsCollector fc = (FacetsCollector) results[1];
            try {
                if (req.counts() != null) {
                    counts = new LinkedHashMap<>();
                    for (String field : req.counts()) {
                        counts.put(field, top(new StringValueFacetCounts(stringState(reader, field), fc), field, req.topN()));
                    }
                }
                if (req.ranges() != null) {
                    ranges = new LinkedHashMap<>();
                    for (Map.Entry<String, List<SearchRequest.Range>> e : req.ranges().entrySet()) {
                        DoubleRange[] rs = e.getValue().stream().map(r -> new DoubleRange(r.label(),
                                r.min() == null ? Double.NEGATIVE_INFINITY : r.min(), r.minInclusive(),
                                r.max() == null ? Double.POSITIVE_INFINITY : r.max(), r.maxInclusive())).toArray(DoubleRange[]::new);
                        ranges.put(e.getKey(), top(new DoubleRangeFacetCounts(e.getKey(), fc, rs), e.getKey(), req.topN()));
                    }
                }
            } catch (IllegalStateException | IllegalArgumentException e) {
                throw SearchException.badRequest(e.getMessage());
            }
        }
        // The bookmark holds the last hit's position; a page with no hit keeps the one it was given.
        ArrayNode bookmark = out.isEmpty() ? previous : Json.NODES.arrayNode().add(out.getLast().order());
        return new Result(top.totalHits.value(), top.totalHits.relation().name(), out, pack(bookmark), counts, ranges, latency);
    }

    /** Each open reader's ordinal maps by field, dropped when the reader closes. */
    private static final Map<IndexReader.CacheKey, Map<String, StringDocValuesReaderState>> STRING_STATES = new ConcurrentHashMap<>();

    /**
     * The field's ordinals across the reader's segments, built once per reader as Lucene advises:
     * building them walks every distinct value of every segment, a cost a query need not pay.
     */
    private static StringDocValuesReaderState stringState(DirectoryReader reader, String field) throws IOException {
        IndexReader.CacheHelper helper = reader.getReaderCacheHelper();
        if (helper == null) return new StringDocValuesReaderState(reader, field);
        Map<String, StringDocValuesReaderState> states = STRING_STATES.get(helper.getKey());
        if (states == null) {
            states = new ConcurrentHashMap<>();
            if (STRING_STATES.putIfAbsent(helper.getKey(), states) == null) helper.addClosedListener(STRING_STATES::remove);
            else states = STRING_STATES.get(helper.getKey());
        }
        StringDocValuesReaderState state = states.get(field);
        if (state == null) {
            state = new StringDocValuesReaderState(reader, field);
            states.put(field, state);
        }
        return state;
    }

    private static Query parse(Parsers parsers, IndexedFields.Schema schema, SearchRequest req) {
        StandardQueryParser qp = parsers.take();
        PointsConfig doubles = new PointsConfig(NumberFormat.getInstance(locale(req.locale())), Double.class);
        Map<String, PointsConfig> points = new LinkedHashMap<>();
        schema.types().forEach((f, t) -> {
            if (t == IndexedFields.Type.DOUBLE) points.put(f, doubles);
        });
        qp.setPointsConfigMap(points);
        try {
            Query q = qp.parse(req.q(), "default");
            if (req.partition() == null) return q;
            return new BooleanQuery.Builder().add(q, BooleanClause.Occur.MUST)
                    .add(new TermQuery(new Term(IndexedFields.PARTITION, req.partition())), BooleanClause.Occur.FILTER).build();
        } catch (QueryNodeException e) {
            throw SearchException.badRequest(e.getMessage());
        } finally {
            parsers.give(qp);
        }
    }

    /** A Java locale as Nouveau takes one ({@code de}, {@code en_GB}); US English when none is given. */
    private static Locale locale(String s) {
        if (s == null || s.isEmpty()) return Locale.US;
        return Locale.forLanguageTag(s.replace('_', '-'));
    }

    private static final Sort DEFAULT_SORT = new Sort(SortField.FIELD_SCORE, new SortField(IndexedFields.ID, SortField.Type.STRING));

    /** The fields asked for, and the id last (unless it is already), so every position is unique and pages can resume. */
    private static Sort sort(IndexedFields.Schema schema, List<String> sort) {
        if (sort == null || sort.isEmpty()) return DEFAULT_SORT;
        List<String> all = new ArrayList<>(sort);
        String last = all.getLast();
        if (!last.equals("_id") && !last.equals("-_id")) all.add("_id");
        SortField[] fields = new SortField[all.size()];
        for (int i = 0; i < fields.length; i++) fields[i] = sortField(schema, all.get(i));
        return new Sort(fields);
    }

    private static SortField sortField(IndexedFields.Schema schema, String s) {
        if (s.equals("relevance")) return SortField.FIELD_SCORE;
        Matcher m = SORT_FIELD.matcher(s);
        if (!m.matches()) throw SearchException.badRequest(s + " is not a valid sort parameter");
        boolean reverse = "-".equals(m.group(1));
        String name = m.group(2);
        if (name.equals(IndexedFields.ID)) return new SortField(IndexedFields.ID, SortField.Type.STRING, reverse);
        IndexedFields.Type t = schema.type(name);
        if (t == null || t == IndexedFields.Type.STRING) return new SortedSetSortField(name, reverse); // no document has it: all equal
        if (t == IndexedFields.Type.DOUBLE) return new SortedNumericSortField(name, SortField.Type.DOUBLE, reverse);
        throw SearchException.badRequest("can't sort on field " + name + ": it is a " + t + " field");
    }

    /** A hit's sort values, each typed as Nouveau types them. */
    private static ArrayNode order(FieldDoc fd) {
        ArrayNode out = Json.NODES.arrayNode();
        for (Object v : fd.fields) {
            ObjectNode o = out.addObject();
            switch (v) {
                case null -> o.put("@type", "null");
                case Float f -> o.put("@type", "float").put("value", f);
                case Double d -> o.put("@type", "double").put("value", d);
                case Integer i -> o.put("@type", "int").put("value", i);
                case Long l -> o.put("@type", "long").put("value", l);
                case BytesRef b -> o.put("@type", "string").put("value", b.utf8ToString());
                case String str -> o.put("@type", "string").put("value", str);
                default -> throw new IllegalStateException("a sort value of " + v.getClass());
            }
        }
        return out;
    }

    /** The position a bookmark names, to search after; 400 when it does not fit the sort. */
    private static FieldDoc after(ArrayNode bookmark, Sort sort) {
        JsonNode order = bookmark.get(0);
        if (order == null || !order.isArray() || order.size() != sort.getSort().length) throw SearchException.badRequest("bookmark does not match the sort order");
        Object[] values = new Object[order.size()];
        for (int i = 0; i < values.length; i++) {
            JsonNode o = order.get(i);
            JsonNode v = o.path("value");
            values[i] = switch (o.path("@type").asText()) {
                case "float" -> v.floatValue();
                case "double" -> v.doubleValue();
                case "int" -> v.intValue();
                case "long" -> v.longValue();
                case "string" -> new BytesRef(v.asText());
                case "null" -> null;
                default -> throw SearchException.badRequest("invalid bookmark");
            };
        }
        SortField[] fs = sort.getSort();
        // Past every document with the last position's values: documents are ordered by id last, which is unique.
        return new FieldDoc(fs[fs.length - 1].getReverse() ? 0 : Integer.MAX_VALUE, Float.NaN, values);
    }

    private static String pack(ArrayNode bookmark) {
        byte[] json = Json.write(bookmark == null ? Json.NODES.arrayNode() : bookmark).getBytes(StandardCharsets.UTF_8);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json);
    }

    private static ArrayNode unpack(String bookmark) {
        if (bookmark == null) return null;
        try {
            JsonNode n = Json.MAPPER.readTree(Base64.getUrlDecoder().decode(bookmark));
            if (n instanceof ArrayNode a) return a;
        } catch (IOException | IllegalArgumentException e) {
            // below
        }
        throw SearchException.badRequest("invalid bookmark");
    }

    /** A facet's labels by count, highest first, ties by label, at most {@code topN}: what CouchDB returns of Nouveau's. */
    private static Map<String, Number> top(Facets facets, String dim, int topN) throws IOException {
        FacetResult r = facets.getTopChildren(topN, dim);
        List<LabelAndValue> lv = r == null ? List.of() : new ArrayList<>(List.of(r.labelValues));
        lv.sort(Comparator.comparingDouble((LabelAndValue x) -> -x.value.doubleValue()).thenComparing(x -> x.label));
        Map<String, Number> out = new LinkedHashMap<>();
        for (LabelAndValue x : lv.subList(0, Math.min(topN, lv.size()))) out.put(x.label, x.value);
        return out;
    }
}
