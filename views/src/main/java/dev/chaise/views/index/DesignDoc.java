package dev.chaise.views.index;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.Collation;
import dev.chaise.views.collation.ViewKeyCodec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The parts of a design document that define its map indexes, and RFC E's View Signature over
 * them. Views are kept in name order; a view's index in that order is its {@code view_id} in the
 * index's keys, so the signature (which covers every name) pins the numbering.
 *
 * @param views in name order
 * @param lib the {@code views.lib} object (CommonJS modules for map functions), or null
 */
public record DesignDoc(String id, String language, List<View> views, JsonNode lib, boolean interactive,
                        boolean localSeq, boolean includeDesign, boolean autoupdate, String signature, Boolean partitionedOption) {

    /**
     * Whether this design document's views are partitioned in a database that is or is not:
     * {@code options.partitioned}, by default the database's flag, and never in a database that
     * is not partitioned ({@code couch_mrview_index:set_partitioned}).
     */
    public boolean partitioned(boolean dbPartitioned) {
        return partitioned(partitionedOption, dbPartitioned);
    }

    /** {@link #partitioned(boolean)} from the option's value alone (null: not given). */
    public static boolean partitioned(Boolean option, boolean dbPartitioned) {
        return dbPartitioned && (option == null || option);
    }

    /**
     * One view: its map source and its reduce (a built-in name like {@code _sum}, JS source, or
     * null). For {@link #QUERY} design documents {@code map} is the whole view object as canonical JSON.
     *
     * @param collation how its keys sort: {@code options.collation} of the view
     */
    public record View(String name, String map, String reduce, Collation collation) {
        public boolean builtinReduce() {
            return reduce != null && reduce.startsWith("_");
        }
    }

    /** The on-disk format of indexes; a new one builds every index again. */
    static final int FORMAT = 3; // 2: per-key counts for every view; 3: a reduce tree for every view

    /** Mango's language: views are index definitions (objects), not functions; see {@code views.mango.JsonIndex}. */
    public static final String QUERY = "query";

    public static final List<String> BUILTIN_REDUCES = List.of("_count", "_sum", "_stats", "_approx_count_distinct", "_first", "_last");

    /** CouchDB 3.5's largest N of {@code _top_N} and {@code _bottom_N}. */
    static final int MAX_RANK = 100;

    /**
     * The built-in a reduce names, as CouchDB 3.5's couch_mrview validates it: most built-ins match
     * by prefix, so "_sum\n\ngarbage" is {@code _sum}; {@code _top_N} and {@code _bottom_N} need an
     * integer N from 1 to 100 and become e.g. {@code _top_5}.
     *
     * @param source the reduce as written, for the rank's digits
     */
    static String builtinReduce(String reduce, String source) {
        for (String rank : List.of("_top_", "_bottom_")) {
            if (!reduce.startsWith(rank)) continue;
            String digits = source.substring(source.indexOf(rank) + rank.length());
            java.math.BigInteger n;
            try {
                n = new java.math.BigInteger(digits);
            } catch (NumberFormatException e) {
                throw invalid("invalid rank reducer");
            }
            if (n.compareTo(java.math.BigInteger.ONE) < 0 || n.compareTo(java.math.BigInteger.valueOf(MAX_RANK)) > 0) {
                throw invalid("rank value must be between 1 and " + MAX_RANK);
            }
            return rank + n;
        }
        for (String b : BUILTIN_REDUCES) if (reduce.startsWith(b)) return b;
        throw invalid("`" + reduce + "` is not a supported reduce function.");
    }

    /**
     * Whether this index keeps a reduce tree for each of its views (map-only views too: it counts
     * rows, for {@code offset}). Mango's JSON indexes ({@link #QUERY}) keep none: {@code _find}
     * has neither {@code offset} nor reduce, and the trees' upkeep would be most of what such an
     * index costs writers. A view query on one still answers, reducing its rows as they stream by.
     */
    public boolean reduceTrees() {
        return !QUERY.equals(language);
    }

    public View view(String name) {
        for (View v : views) if (v.name.equals(name)) return v;
        return null;
    }

    public int viewIndex(String name) {
        for (int i = 0; i < views.size(); i++) if (views.get(i).name.equals(name)) return i;
        return -1;
    }

    public List<String> maps() {
        return views.stream().map(View::map).toList();
    }

    /**
     * Reads a design document's index definition. Invalid definitions fail with
     * {@link ViewException} {@code invalid_design_doc}, which CouchDB reports when the document is
     * saved; a design doc without views yields an empty list.
     */
    public static DesignDoc parse(String id, JsonNode body) {
        JsonNode language = body.get("language");
        String lang = language == null || language.isNull() ? "javascript" : language.asText();
        if (language != null && !language.isTextual() && !language.isNull()) throw invalid("`language` must be a string");
        JsonNode viewsNode = body.get("views");
        Map<String, View> views = new TreeMap<>();
        JsonNode lib = null;
        if (viewsNode != null && !viewsNode.isNull()) {
            if (!viewsNode.isObject()) throw invalid("`views` is not an object");
            for (Map.Entry<String, JsonNode> e : viewsNode.properties()) {
                if (e.getKey().equals("lib")) {
                    lib = e.getValue();
                    continue;
                }
                JsonNode v = e.getValue();
                if (!v.isObject()) throw invalid("View " + e.getKey() + " must be an object");
                JsonNode map = v.get("map");
                String mapText;
                if (QUERY.equals(lang)) {
                    // The whole view (map, options) is the definition; its canonical JSON keeps the signature stable.
                    if (map == null || !map.isObject()) throw invalid("View " + e.getKey() + " must have a `map` object");
                    mapText = canonical(v).toString();
                } else {
                    if (map == null || !map.isTextual()) throw invalid("View " + e.getKey() + " must have a `map` string");
                    mapText = map.textValue();
                }
                JsonNode red = v.get("reduce");
                String reduce = null;
                if (red != null && !red.isNull()) {
                    if (!red.isTextual()) throw invalid("View " + e.getKey() + " `reduce` must be a string");
                    reduce = red.textValue().strip();
                    if (reduce.startsWith("_")) reduce = builtinReduce(reduce, red.textValue());
                }
                JsonNode viewOptions = v.get("options");
                views.put(e.getKey(), new View(e.getKey(), mapText, reduce, Collation.of(viewOptions)));
            }
        }
        JsonNode options = body.get("options");
        if (options != null && !options.isNull() && !options.isObject()) throw invalid("`options` must be an object");
        boolean interactive = flag(options, "interactive");
        boolean localSeq = flag(options, "local_seq");
        boolean includeDesign = flag(options, "include_design");
        JsonNode part = options == null ? null : options.get("partitioned");
        if (part != null && !part.isBoolean()) throw invalid("`options.partitioned` field must have boolean type"); // couch_mrview:validate_ddoc_fields
        Boolean partitioned = part == null ? null : part.booleanValue();
        JsonNode auto = body.get("autoupdate");
        boolean autoupdate = auto == null || !auto.isBoolean() || auto.booleanValue();
        List<View> list = new ArrayList<>(views.values());
        return new DesignDoc(id, lang, List.copyOf(list), lib, interactive, localSeq, includeDesign, autoupdate,
                signature(lang, list, lib, options), partitioned);
    }

    private static boolean flag(JsonNode options, String name) {
        return options != null && options.path(name).asBoolean(false);
    }

    /**
     * md5 over the canonical JSON of language, options and every view (map and reduce, in name
     * order) plus {@code views.lib}: whatever changes what an index holds changes the signature.
     */
    static String signature(String language, List<View> views, JsonNode lib, JsonNode options) {
        ObjectNode canon = Json.NODES.objectNode();
        canon.put("language", language);
        canon.put("collator", ViewKeyCodec.collatorVersion()); // new ICU rules mean stale sort keys: a new index
        canon.put("format", FORMAT);
        ObjectNode vs = canon.putObject("views");
        for (View v : views) {
            ObjectNode o = vs.putObject(v.name);
            o.put("map", v.map);
            if (v.reduce != null) o.put("reduce", v.reduce);
            if (v.collation != Collation.DEFAULT) o.put("collation", v.collation.name()); // other bytes: another index
        }
        if (lib != null) canon.set("lib", canonical(lib));
        if (options != null && !options.isNull()) canon.set("options", canonical(options));
        try {
            byte[] md5 = MessageDigest.getInstance("MD5").digest(Json.write(canon).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(md5);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Object members sorted by name, recursively, so member order never changes a signature. */
    private static JsonNode canonical(JsonNode n) {
        if (n.isObject()) {
            ObjectNode out = Json.NODES.objectNode();
            toMap(n).forEach((k, v) -> out.set(k, canonical(v)));
            return out;
        }
        if (n.isArray()) {
            var out = Json.NODES.arrayNode();
            n.forEach(x -> out.add(canonical(x)));
            return out;
        }
        return n;
    }

    private static Map<String, JsonNode> toMap(JsonNode n) {
        Map<String, JsonNode> m = new TreeMap<>();
        n.properties().forEach(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    private static ViewException invalid(String reason) {
        return new ViewException(ViewException.Kind.INVALID_DESIGN_DOC, reason);
    }
}
