package dev.chaise.views.search;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.views.js.MapOutcome;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoubleField;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KeywordField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.util.BytesRef;

/**
 * What an index function's {@code index(...)} calls make of a document: Lucene fields as Nouveau
 * makes them ({@code text} analyzed, {@code string} a keyword with doc values for sorting and
 * counts, {@code double} a point with doc values for ranges and sorting, {@code stored} only
 * stored), and the index's schema: each field name keeps the type of its first use.
 */
final class IndexedFields {
    static final String ID = "_id";
    /** The partition of a partitioned database's document, not stored: what a partition query filters on. */
    static final String PARTITION = "_partition";

    enum Type { TEXT, STRING, DOUBLE, STORED }

    private IndexedFields() {}

    /** Field name to type; kept in each commit's user data, as Nouveau keeps it. */
    static final class Schema {
        private final Map<String, Type> types = new TreeMap<>();

        static Schema parse(String s) {
            Schema out = new Schema();
            if (s != null && !s.isEmpty()) {
                for (String part : s.split(",")) {
                    int colon = part.lastIndexOf(':');
                    out.types.put(part.substring(0, colon), Type.valueOf(part.substring(colon + 1)));
                }
            }
            return out;
        }

        Type type(String field) {
            return types.get(field);
        }

        Map<String, Type> types() {
            return types;
        }

        /** Records a field's type at its first use; Nouveau's 400 when a later use gives it another. */
        void check(String field, Type t) {
            Type was = types.putIfAbsent(field, t);
            if (was != null && was != t) throw SearchException.badRequest("field " + field + " is of type " + was + ", not " + t);
        }

        String encode() {
            return types.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
        }
    }

    /**
     * The document for a doc's outcome (with its partition in a partitioned database, as Nouveau
     * keeps it, so a partition's query is filtered to it), or null when it gives no field (a function that threw, or
     * indexed nothing): Nouveau then leaves the document out of the index.
     */
    static Document document(String docId, String partition, MapOutcome outcome, Schema schema) {
        if (!(outcome instanceof MapOutcome.Rows rows) || rows.rows().isEmpty()) return null;
        Document d = new Document();
        d.add(new StringField(ID, docId, Field.Store.YES));
        if (partition != null) d.add(new StringField(PARTITION, partition, Field.Store.NO));
        d.add(new SortedDocValuesField(ID, new BytesRef(docId)));
        List<MapOutcome.Emit> emits = rows.rows();
        for (MapOutcome.Emit e : emits) {
            JsonNode f = e.key();
            String name = f.path("n").asText();
            JsonNode v = f.path("v");
            Field.Store store = f.path("s").asBoolean() ? Field.Store.YES : Field.Store.NO;
            Type t = Type.valueOf(f.path("t").asText().toUpperCase(java.util.Locale.ROOT));
            schema.check(name, t);
            switch (t) {
                case TEXT -> d.add(new TextField(name, v.asText(), store));
                case STRING -> d.add(new KeywordField(name, v.asText(), store));
                case DOUBLE -> d.add(new DoubleField(name, v.asDouble(), store));
                case STORED -> d.add(v.isNumber() ? new StoredField(name, v.asDouble()) : new StoredField(name, v.asText()));
            }
        }
        return d;
    }
}
