package dev.chaise.views.mango;

import dev.chaise.views.collation.RawOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mango's indexes as design documents: {@code POST _index} adds a view to a
 * {@code "language": "query"} design document (creating it if need be), {@code GET _index} lists
 * them with the special {@code _all_docs} index first, {@code DELETE} and {@code _bulk_delete}
 * remove views (and the design document with its last one). Requests are validated in the order
 * and with the errors of CouchDB 3.5's {@code mango_opts} and {@code mango_idx}.
 */
public final class MangoIndexes {
    /** Saving a design document that changed under us: read and apply again, this many times. */
    private static final int SAVE_ATTEMPTS = 8;

    private final ConcurrentHashMap<Object, Parsed> parsed = new ConcurrentHashMap<>();
    /** {@code [nouveau] enable}: when off, nouveau indexes are neither listed nor created, as mango_idx leaves out a disabled type. */
    private final java.util.function.BooleanSupplier nouveauOn;

    MangoIndexes(java.util.function.BooleanSupplier nouveauOn) {
        this.nouveauOn = nouveauOn;
    }

    /** What {@code POST _index} answers. */
    public record Created(String result, String id, String name) {}

    // ---------------------------------------------------------------- listing

    /** Every JSON index of the database, sorted by design document id then name (as {@code lists:sort} of CouchDB's records). */
    public List<JsonIndex> list(Database db) {
        List<JsonIndex> out = new ArrayList<>();
        for (DocInfo d : db.read(r -> r.designDocs())) out.addAll(indexes(db, d).json());
        out.sort(Comparator.comparing(JsonIndex::ddoc, RawOrder::compareStrings).thenComparing(JsonIndex::name, RawOrder::compareStrings));
        return out;
    }

    /** Every {@code "type": "nouveau"} index of the database, in the same order. */
    public List<NouveauIndex> nouveau(Database db) {
        List<NouveauIndex> out = new ArrayList<>();
        if (!nouveauOn.getAsBoolean()) return out;
        for (DocInfo d : db.read(r -> r.designDocs())) out.addAll(indexes(db, d).nouveau());
        out.sort(Comparator.comparing(NouveauIndex::ddoc, RawOrder::compareStrings).thenComparing(NouveauIndex::name, RawOrder::compareStrings));
        return out;
    }

    /** One design document's indexes of either kind. */
    private record Parsed(List<JsonIndex> json, List<NouveauIndex> nouveau) {}

    /** One design document's indexes, parsed once per revision. */
    private Parsed indexes(Database db, DocInfo d) {
        record Key(long db, String id, String rev) {}
        Key k = new Key(db.handle().id(), d.id(), d.rev().toString());
        Parsed cached = parsed.get(k);
        if (cached != null) return cached;
        Parsed p;
        try {
            JsonNode body = db.get(d.id(), d.rev(), false).body();
            p = new Parsed(JsonIndex.fromDesignDoc(d.id(), body, db.partitioned()), NouveauIndex.fromDesignDoc(d.id(), body, db.partitioned()));
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            p = new Parsed(List.of(), List.of()); // replaced since the listing: the next request sees the new one
        }
        if (parsed.size() > 10_000) parsed.clear();
        parsed.put(k, p);
        return p;
    }

    /** {@code GET _index}: {@code total_rows} counts every index, the special one included. */
    public ObjectNode listJson(Database db, String skipParam, String limitParam) {
        List<ObjectNode> all = new ArrayList<>();
        for (JsonIndex i : list(db)) all.add(i.toJson());
        for (NouveauIndex i : nouveau(db)) all.add(i.toJson());
        all.sort(Comparator.comparing((ObjectNode o) -> o.get("ddoc").textValue(), RawOrder::compareStrings)
                .thenComparing(o -> o.get("name").textValue(), RawOrder::compareStrings)
                .thenComparing(o -> o.get("type").textValue()));
        all.addFirst(Find.specialIndex());
        int total = all.size();
        int limit = limitParam == null ? total : listParam(limitParam);
        int skip = skipParam == null ? 0 : listParam(skipParam);
        if (limit < 1 || skip < 0) throw listParams();
        skip = Math.min(skip, total);
        ObjectNode out = Json.NODES.objectNode();
        out.put("total_rows", total);
        ArrayNode list = out.putArray("indexes");
        for (int i = skip; i < total && i - skip < limit; i++) list.add(all.get(i));
        return out;
    }

    private static int listParam(String v) {
        try {
            return Integer.parseInt(v.strip());
        } catch (NumberFormatException e) {
            throw listParams();
        }
    }

    /** CouchDB answers these with a 500; a client's bad parameter is a 400 here. */
    private static MangoException listParams() {
        return new MangoException("invalid_list_index_params", "Index parameter ranges: limit > 1, skip > 0");
    }

    // ---------------------------------------------------------------- creating

    /** A validated {@code POST _index} body. */
    record Request(JsonNode def, String type, String name, String ddoc, long w, Boolean partitioned, boolean interactive) {}

    static Request parseRequest(JsonNode body) {
        if (body == null || !body.isObject()) throw new MangoException("invalid_ejson", "Invalid JSON value: " + body);
        Map<String, JsonNode> rest = new LinkedHashMap<>();
        body.properties().forEach(e -> rest.put(e.getKey(), e.getValue()));
        JsonNode def = rest.remove("index");
        if (def == null) throw new MangoException("missing_required_key", "Missing required key: index");
        JsonNode typeNode = rest.remove("type");
        String type = "json";
        if (typeNode != null) {
            if (!typeNode.isTextual()) throw new MangoException("invalid_string", "Invalid string: " + typeNode);
            type = typeNode.textValue();
        }
        String name = nonEmptyString(rest.remove("name"));
        String ddoc = nonEmptyString(rest.remove("ddoc"));
        JsonNode wNode = rest.remove("w");
        long w = 2;
        if (wNode != null) {
            if (!wNode.isIntegralNumber() || wNode.bigIntegerValue().signum() <= 0 || !wNode.canConvertToLong()) {
                throw new MangoException("invalid_pos_integer", wNode + " is not an integer greater than zero");
            }
            w = wNode.longValue();
        }
        JsonNode p = rest.remove("partitioned");
        Boolean partitioned = null;
        if (p != null) {
            if (!p.isBoolean()) throw new MangoException("invalid_partitioned_value", "Invalid partitioned value: " + p);
            partitioned = p.booleanValue();
        }
        JsonNode inter = rest.remove("interactive"); // Chaise's: maintained in each write's own transaction (RFC E)
        boolean interactive = false;
        if (inter != null) {
            if (!inter.isBoolean()) throw new MangoException("invalid_boolean", "Invalid boolean value: " + inter);
            interactive = inter.booleanValue();
        }
        if (!rest.isEmpty()) {
            String key = rest.keySet().iterator().next();
            throw new MangoException("invalid_key", "Invalid key " + key + " for this request.");
        }
        switch (type) {
            case "json", "nouveau" -> { }
            case "text" -> throw new MangoException(501, "index_not_implemented",
                    "Chaise has no Clouseau: text indexes are not implemented; use a json or nouveau index");
            default -> throw new MangoException("invalid_index", "Invalid type for index: " + type);
        }
        return new Request(def, type, name, ddoc, w, partitioned, interactive);
    }

    private static String nonEmptyString(JsonNode v) {
        if (v == null) return null;
        if (!v.isTextual()) throw new MangoException("invalid_string", "Invalid string: " + v);
        if (v.textValue().isEmpty()) throw new MangoException("invalid_empty_string", "Index name or ddoc cannot be empty string");
        return v.textValue();
    }

    /** The {@code map} of a JSON index's view: {@code fields} as an object, the partial filter normalized. */
    static ObjectNode viewMap(JsonNode def) {
        if (!def.isObject()) throw new MangoException("invalid_index", "JSON indexes must be an object, not: " + def);
        Map<String, JsonNode> rest = new LinkedHashMap<>();
        def.properties().forEach(e -> rest.put(e.getKey(), e.getValue()));
        JsonNode fields = rest.remove("fields");
        if (fields == null) throw new MangoException("missing_required_key", "Missing required key: fields");
        List<Sort.Field> sort = Sort.parse(fields);
        JsonNode pfs = rest.remove("partial_filter_selector");
        if (!rest.isEmpty()) throw new MangoException("invalid_key", "Invalid key " + rest.keySet().iterator().next() + " for this request.");
        ObjectNode map = Json.NODES.objectNode();
        ObjectNode f = map.putObject("fields");
        for (Sort.Field s : sort) if (!f.has(s.name())) f.put(s.name(), s.descending() ? "desc" : "asc");
        if (pfs == null || pfs.isNull()) {
            map.putObject("partial_filter_selector");
        } else {
            if (!pfs.isObject()) throw new MangoException("invalid_selector_json", "Selector must be a JSON object, not: " + pfs);
            map.set("partial_filter_selector", Selector.parse(pfs).toJson());
        }
        return map;
    }

    /** {@code POST _index}. */
    public Created create(SecuredDb db, JsonNode body) {
        Request r = parseRequest(body);
        boolean nouveau = r.type().equals("nouveau");
        if (nouveau && !nouveauOn.getAsBoolean()) {
            throw new MangoException(503, "required index service unavailable", "nouveau"); // mango_idx:get_idx_type
        }
        // a JSON index is a view; a nouveau one an entry of the nouveau member, as mango_idx_nouveau:add writes it
        ObjectNode added = nouveau ? NouveauIndex.entry(NouveauIndex.validate(r.def())) : view(viewMap(r.def()), r.def());
        String generated = r.name() == null || r.ddoc() == null
                ? IndexNames.generate(r.def(), r.type(), r.name(), r.ddoc(), r.w(), r.partitioned()) : null;
        String name = r.name() != null ? r.name() : generated;
        String ddocId = r.ddoc() == null ? DocumentJson.DESIGN_PREFIX + generated
                : r.ddoc().startsWith(DocumentJson.DESIGN_PREFIX) ? r.ddoc() : DocumentJson.DESIGN_PREFIX + r.ddoc();
        DocumentJson.validateId(ddocId);
        for (int attempt = 1; ; attempt++) {
            StoredDoc current = load(db.database(), ddocId);
            ObjectNode ddoc = current == null ? newDesignDoc() : current.body().deepCopy();
            JsonNode lang = ddoc.get("language");
            if (lang == null || !lang.isTextual() || !lang.textValue().equals(DesignDoc.QUERY)) {
                throw new MangoException("invalid_ddoc_lang", "Existing design doc has an invalid language: " + (lang == null ? "false" : lang));
            }
            String member = nouveau ? "nouveau" : "views";
            JsonNode views = ddoc.get(member);
            ObjectNode vs = views instanceof ObjectNode o ? o : ddoc.putObject(member);
            boolean interactiveNow = ddoc.path("options").path("interactive").asBoolean(false);
            // mango_idx:set_ddoc_partitioned: a new design document takes the option, an existing one must have the same
            JsonNode had = ddoc.path("options").get("partitioned");
            Boolean old = had != null && had.isBoolean() ? had.booleanValue() : null;
            if (!java.util.Objects.equals(old, r.partitioned())) {
                if (current != null) {
                    throw new MangoException("invalid_partitioned_option",
                            "Requested partitioned option does not match existing value on design document " + ddocId);
                }
                JsonNode o = ddoc.get("options");
                (o instanceof ObjectNode on ? on : ddoc.putObject("options")).put("partitioned", r.partitioned());
            }
            if (added.equals(vs.get(name)) && (!r.interactive() || interactiveNow)) return new Created("exists", ddocId, name);
            vs.set(name, added);
            if (r.interactive()) {
                JsonNode o = ddoc.get("options");
                (o instanceof ObjectNode on ? on : ddoc.putObject("options")).put("interactive", true);
            }
            if (save(db, ddocId, current, ddoc, attempt)) return new Created("created", ddocId, name);
        }
    }

    private static ObjectNode view(ObjectNode map, JsonNode def) {
        ObjectNode view = Json.NODES.objectNode();
        view.set("map", map);
        view.put("reduce", "_count");
        view.putObject("options").set("def", def);
        return view;
    }

    private static ObjectNode newDesignDoc() {
        ObjectNode d = Json.NODES.objectNode();
        d.put("language", DesignDoc.QUERY);
        return d;
    }

    /** The live design document, or null (missing or deleted: CouchDB then starts from an empty query design document). */
    private static StoredDoc load(Database db, String ddocId) {
        try {
            return db.get(ddocId, null, false);
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return null;
            throw e;
        }
    }

    /** Writes the new body over {@code current}; false when another write got there first (try again). */
    private static boolean save(SecuredDb db, String ddocId, StoredDoc current, ObjectNode body, int attempt) {
        boolean deleted = body == null;
        UpdateResult res = db.update(List.of(DocUpdate.edit(ddocId, current == null ? null : current.rev(), deleted,
                deleted ? Json.NODES.objectNode() : body)), true).getFirst();
        if (res.ok()) return true;
        if (res.error().kind() == StorageException.Kind.CONFLICT && attempt < SAVE_ATTEMPTS) return false;
        throw res.error();
    }

    // ---------------------------------------------------------------- deleting

    /** {@code DELETE _index/{ddoc}/{type}/{name}}: 404 {@code not_found}/{@code missing} when there is no such index. */
    public void delete(SecuredDb db, String ddoc, String type, String name) {
        String ddocId = ddoc.startsWith(DocumentJson.DESIGN_PREFIX) ? ddoc : DocumentJson.DESIGN_PREFIX + ddoc;
        if (!deleteView(db, ddocId, type, name)) throw StorageException.notFound("missing");
    }

    /** Removes the index (a view, or a nouveau entry), and the design document with its last one; false if there was no such index. */
    private boolean deleteView(SecuredDb db, String ddocId, String type, String name) {
        for (int attempt = 1; ; attempt++) {
            StoredDoc current = load(db.database(), ddocId);
            if (current == null) return false;
            // only their names matter here
            List<String> names = switch (type) {
                case "json" -> JsonIndex.fromDesignDoc(ddocId, current.body(), false).stream().map(JsonIndex::name).toList();
                case "nouveau" -> NouveauIndex.fromDesignDoc(ddocId, current.body(), false).stream().map(NouveauIndex::name).toList();
                default -> List.of();
            };
            if (!names.stream().anyMatch(n -> name == null || n.equals(name))) return false;
            String member = type.equals("json") ? "views" : "nouveau";
            ObjectNode ddoc = current.body().deepCopy();
            ObjectNode views = (ObjectNode) ddoc.get(member);
            if (name == null) {
                for (String n : names) views.remove(n);
            } else {
                views.remove(name);
            }
            if (views.isEmpty()) ddoc.remove(member);
            // A design document left with nothing but its language goes, as CouchDB deletes it.
            boolean empty = ddoc.size() == 1 && ddoc.has("language");
            if (save(db, ddocId, current, empty ? null : ddoc, attempt)) return true;
        }
    }

    /** {@code POST _index/_bulk_delete}: each design document's JSON and nouveau indexes go; the answer lists what did and did not. */
    public ObjectNode bulkDelete(SecuredDb db, JsonNode body) {
        if (body == null || !body.isObject()) throw new MangoException("invalid_ejson", "Invalid JSON value: " + body);
        JsonNode ids = body.get("docids");
        if (ids == null) throw new MangoException("missing_required_key", "Missing required key: docids");
        if (!ids.isArray()) throw new MangoException("invalid_bulk_docs", "Bulk Delete requires an array of non-null docids. Docids: " + ids);
        for (JsonNode id : ids) UseIndex.parse(id); // CouchDB checks each as a use_index value
        JsonNode w = body.get("w");
        if (w != null && (!w.isIntegralNumber() || w.bigIntegerValue().signum() <= 0)) {
            throw new MangoException("invalid_pos_integer", w + " is not an integer greater than zero");
        }
        for (Map.Entry<String, JsonNode> e : body.properties()) {
            if (!e.getKey().equals("docids") && !e.getKey().equals("w")) {
                throw new MangoException("invalid_key", "Invalid key " + e.getKey() + " for this request.");
            }
        }
        ArrayNode success = Json.NODES.arrayNode();
        ArrayNode fail = Json.NODES.arrayNode();
        for (JsonNode idNode : ids) {
            if (!idNode.isTextual()) {
                ObjectNode f = fail.addObject();
                f.set("id", idNode);
                f.put("error", "not_found");
                continue;
            }
            String id = idNode.textValue().startsWith(DocumentJson.DESIGN_PREFIX) ? idNode.textValue() : DocumentJson.DESIGN_PREFIX + idNode.textValue();
            try {
                boolean json = deleteView(db, id, "json", null);
                if (deleteView(db, id, "nouveau", null) | json) success.addObject().put("id", id).put("ok", true);
                else fail.addObject().put("id", id).put("error", "not_found");
            } catch (StorageException e) {
                fail.addObject().put("id", id).put("error", e.error());
            }
        }
        ObjectNode out = Json.NODES.objectNode();
        // CouchDB folds each list from the front: the last design document comes first.
        out.set("success", reversed(success));
        out.set("fail", reversed(fail));
        return out;
    }

    private static ArrayNode reversed(ArrayNode a) {
        ArrayNode out = Json.NODES.arrayNode();
        for (int i = a.size() - 1; i >= 0; i--) out.add(a.get(i));
        return out;
    }
}
