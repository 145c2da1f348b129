package dev.chaise.views.mango;

import static dev.chaise.views.mango.SelectorTest.j;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.views.js.MapOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A selector as the Lucene query a Mango nouveau index is searched with: CouchDB 3.5's
 * mango_selector_text (its eunit tests' cases, written out through to_query), and the fields
 * mango_native_proc makes of a document for those queries to find.
 */
class TextQueryTest {

    private static String q(String selector) {
        return TextQuery.convert(Selector.parse(j(selector)));
    }

    private static final String EXISTS = "(($fieldnames:field_3a*) OR ($fieldnames:field.*))";

    @Test
    void equalityTakesTheValuesType() {
        assertEquals("(field_3anull:true)", q("{'field':null}"));
        assertEquals("(field_3aboolean:true)", q("{'field':true}"));
        assertEquals("(field_3anumber:42)", q("{'field':42}"));
        assertEquals("(field_3astring:\"value\")", q("{'field':'value'}"));
        assertEquals("(field_3anumber:42)", q("{'field':{'$eq':42}}"));
        assertEquals("(field_3anumber:\\-3)", q("{'field':-3}"), "a leading minus is not Lucene's prohibit");
        assertEquals("(field_3anumber:[* TO -3})", q("{'field':{'$lt':-3}}"));
        assertEquals("(field1.field2_3astring:\"value\")", q("{'field1':{'field2':'value'}}"), "nested objects are paths");
        assertEquals("(field1.field2_3astring:\"value\")", q("{'field1':{'$eq':{'field2':'value'}}}"), "$eq of an object: its members under it");
        assertEquals("(((tags._5b_5d.a_3anumber:1) AND (tags._5b_5d.b_3anumber:2)))", q("{'tags':{'$all':[{'a':1,'b':2}]}}"));
        assertEquals("((f.a_3anumber:1) AND (f.b_3anumber:2))", q("{'f':{'$eq':{'a':1,'b':2}}}"));
        assertEquals("(($fieldnames:f_3a*) OR ($fieldnames:f.*))", q("{'f':{'$eq':{}}}"));
        assertEquals("(($fieldnames:f_3a*) OR ($fieldnames:f.*))", q("{'f':{'$ne':{'a':1}}}"), "an object may hold more: nothing to subtract");
        assertEquals("((field1_3astring:\"value1\") AND (field2_3astring:\"value2\"))", q("{'field1':'value1','field2':'value2'}"));
    }

    @Test
    void anArrayIsItsLengthAndEachElement() {
        assertEquals("((field._5b_5d_3alength:3) AND (field._5b_5d_3anumber:1) AND (field._5b_5d_3anumber:2) AND (field._5b_5d_3anumber:3))",
                q("{'field':[1,2,3]}"));
        assertEquals("(field._5b_5d_3alength:2)", q("{'field':{'$size':2}}"));
        assertEquals("((field._5b_5d_3astring:\"value1\") AND (field._5b_5d_3astring:\"value2\"))", q("{'field':{'$all':['value1','value2']}}"));
        assertEquals("(field._5b_5d_3astring:\"value\")", q("{'field':{'$elemMatch':{'$eq':'value'}}}"));
        assertEquals("(field._5b_5d_3astring:\"value\")", q("{'field':{'$allMatch':{'$eq':'value'}}}"));
        assertEquals("((tags.0_3astring:\"x\") OR (tags._5b_5d_3astring:\"x\"))", q("{'tags.0':'x'}"), "a position is also any element");
    }

    @Test
    void rangesKeepTheirBoundsType() {
        assertEquals("(field_3anumber:[* TO 42})", q("{'field':{'$lt':42}}"));
        assertEquals("(field_3anumber:[* TO 42])", q("{'field':{'$lte':42}}"));
        assertEquals("(field_3anumber:[42 TO *])", q("{'field':{'$gte':42}}"));
        assertEquals("(field_3anumber:{42 TO *])", q("{'field':{'$gt':42}}"));
        assertEquals("(field_3anumber:{12.5 TO *])", q("{'field':{'$gt':12.5}}"), "a float as written, not Erlang's 1.25000000000000000000e+01");
        assertEquals("($fieldnames:field_3astring)", q("{'field':{'$lt':'m'}}"), "any string: Lucene's byte order is not Mango's collation");
        assertEquals("($fieldnames:field_3astring)", q("{'field':{'$gt':'a'}}"));
        for (String op : List.of("$lt", "$lte", "$gt", "$gte")) {
            assertEquals(EXISTS, q("{'field':{'" + op + "':[1,2,3]}}"), op + " an array: any value, the matcher decides");
            assertEquals(EXISTS, q("{'field':{'" + op + "':null}}"));
        }
    }

    @Test
    void negationsSubtractFromTheFieldBeingThere() {
        assertEquals("(" + EXISTS + " AND NOT ((field_3anumber:42)))", q("{'field':{'$ne':42}}"));
        assertEquals("(" + EXISTS + ")", q("{'field':{'$nin':[]}}"));
        assertEquals("(" + EXISTS + " AND NOT ((((field_3anumber:1) OR (field._5b_5d_3anumber:1)) OR ((field_3anumber:2) OR (field._5b_5d_3anumber:2)))))",
                q("{'field':{'$nin':[1,2]}}"));
        assertEquals(EXISTS, q("{'field':{'$exists':true}}"));
        assertEquals("($fieldnames:/.*/  AND NOT (" + EXISTS + "))", q("{'field':{'$exists':false}}"));
        // CouchDB subtracts "any number" here and finds nothing; what cannot be subtracted exactly is not subtracted
        assertEquals(EXISTS, q("{'field':{'$not':{'$mod':[2,1]}}}"));
        assertEquals(EXISTS, q("{'field':{'$not':{'$elemMatch':{'$eq':'x'}}}}"));
        assertEquals(EXISTS, q("{'field':{'$ne':[1,2]}}"), "array equality is found by length and elements, in any order");
    }

    @Test
    void inIsTheValueOrAnElement() {
        assertEquals("", q("{'field':{'$in':[]}}"), "nothing to ask");
        assertEquals("(((field_3astring:\"value1\") OR (field._5b_5d_3astring:\"value1\")) OR ((field_3astring:\"value2\") OR (field._5b_5d_3astring:\"value2\")))",
                q("{'field':{'$in':['value1','value2']}}"));
    }

    @Test
    void whatLuceneCannotSayIsTheFieldBeingThere() {
        assertEquals(EXISTS, q("{'field':{'$type':'string'}}"));
        assertEquals("($fieldnames:field_3anumber)", q("{'field':{'$mod':[2,1]}}"));
        assertEquals("($fieldnames:field_3astring)", q("{'field':{'$regex':'^a'}}"));
        assertEquals("(field_3astring:a\\ b*)", q("{'field':{'$beginsWith':'a b'}}"));
        assertEquals("($fieldnames:field_3astring)", q("{'field':{'$beginsWith':''}}"), "not field:*, which Lucene refuses");
    }

    @Test
    void textIsAPhraseOnTheDefaultField() {
        assertEquals("($default:\"hello\")", q("{'$text':'hello'}"));
        assertEquals("($default:\"hello\\ there\")", q("{'$text':'hello there'}"));
        assertEquals("(($default:\"hello\") AND (age_3anumber:{5 TO *]))", q("{'$text':'hello','age':{'$gt':5}}"));
    }

    @Test
    void keyMapMatchHasNoQuery() {
        MangoException e = assertThrows(MangoException.class, () -> q("{'field':{'$keyMapMatch':{'$eq':'k'}}}"));
        assertEquals("invalid_operator", e.error());
        assertEquals("Invalid text operator: $keyMapMatch", e.reason());
        assertEquals(400, e.status());
    }

    @Test
    void valuesAndNamesAreEscaped() {
        assertEquals("(field_3astring:\"a\\+b\\(c\\)\\:\\/\\&&\\||d\")", q("{'field':'a+b(c):/&&||d'}"));
        assertEquals("(field_3astring:\"a+1\")", q("{'field':'a+1'}"), "a value that reads as a number stays as CouchDB writes it");
        assertEquals("(field_3astring:\"say \\\"hi\\\" 2\")", q("{'field':'say \\\"hi\\\" 2'}"), "but its quotes cannot end the phrase");
        assertEquals("(a_2eb_3anumber:1)", q("{'a\\\\.b':1}"), "an escaped dot is part of the name");
        assertEquals("(caf_c3_a9_3astring:\"x\")", q("{'café':'x'}"), "UTF-8 bytes as _xx");
        assertEquals("(my_2dfield_3astring:\"x\")", q("{'my-field':'x'}"));
    }

    @Test
    void indexableFieldsAreWhatTheIndexMustDeclare() {
        assertEquals(Set.of("bar:number"), fields("{'bar':{'$gt':5}}"));
        assertEquals(Set.of("$default"), fields("{'$text':'x'}"));
        assertEquals(Set.of("foo:string"), fields("{'foo':{'$in':['a','b']}}"), "the element variant is not declared");
        assertEquals(Set.of("tags.0:string"), fields("{'tags.0':'x'}"));
        assertEquals(Set.of(), fields("{'a':{'$exists':true}}"));
        assertEquals(Set.of(), fields("{'a':{'$size':2}}"), "array lengths are the index's own");
        assertEquals(Set.of("a:string"), fields("{'a':{'$regex':'x'}}"));
        assertEquals(Set.of("a:string"), fields("{'a':{'$gte':'x'}}"));
        assertEquals(Set.of("b:number"), fields("{'a':{'$exists':false},'b':1}"), "$exists false starts the list again");
        assertEquals(Set.of(), fields("{'b':1,'a':{'$exists':false}}"));
    }

    private static Set<String> fields(String selector) {
        return TextQuery.indexableFields(Selector.parse(j(selector)));
    }

    @Test
    void aDocumentsFieldsAreItsPathsAndTypes() {
        List<String> all = names(new NouveauFields("{}").map(j(
                "{'_id':'d1','name':'Bob','age':3,'tags':['x','y'],'ok':true,'n':null,'a':{'b.c':'z'}}")));
        assertTrue(all.contains("_5fid_3astring=string:d1"), all.toString());
        assertTrue(all.contains("name_3astring=string:Bob"));
        assertTrue(all.contains("age_3anumber=double:3"));
        assertTrue(all.contains("tags._5b_5d_3alength=double:2"));
        assertTrue(all.contains("tags._5b_5d_3astring=string:y"));
        assertTrue(all.contains("ok_3aboolean=string:true"));
        assertTrue(all.contains("n_3anull=string:true"));
        assertTrue(all.contains("a.b_2ec_3astring=string:z"));
        assertTrue(all.contains("$default=text:Bob"), "strings are also default text");
        assertTrue(all.contains("$fieldnames=string:age_3anumber"));

        List<String> some = names(new NouveauFields("{'fields':[{'name':'name','type':'string'}],'default_field':{'enabled':false}}".replace('\'', '"'))
                .map(j("{'_id':'d1','name':'Bob','age':3,'tags':['x']}")));
        assertEquals(List.of("$fieldnames=string:tags._5b_5d_3alength", "$fieldnames=string:name_3astring",
                "tags._5b_5d_3alength=double:1", "name_3astring=string:Bob").stream().sorted().toList(), some.stream().sorted().toList(),
                "listed fields only, array lengths always, no default text");

        assertEquals(List.of(), names(new NouveauFields("{}").map(j("{'_id':'_design/x','a':'b'}"))), "design documents are left out");
        NouveauFields partial = new NouveauFields("{\"partial_filter_selector\":{\"kind\":\"a\"}}");
        assertEquals(List.of(), names(partial.map(j("{'_id':'d','kind':'b'}"))));
        assertFalse(names(partial.map(j("{'_id':'d','kind':'a'}"))).isEmpty());
    }

    private static List<String> names(List<MapOutcome> out) {
        List<String> s = new ArrayList<>();
        for (MapOutcome.Emit e : ((MapOutcome.Rows) out.getFirst()).rows()) {
            JsonNode k = e.key();
            s.add(k.get("n").asText() + "=" + k.get("t").asText() + ":" + k.get("v").asText());
        }
        return s;
    }
}
