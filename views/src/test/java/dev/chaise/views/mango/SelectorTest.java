package dev.chaise.views.mango;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class SelectorTest {
    static final ObjectMapper M = new ObjectMapper();

    static JsonNode j(String s) {
        try {
            return M.readTree(s.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(s, e);
        }
    }

    static boolean m(String selector, String doc) {
        return Selector.parse(j(selector)).matches(j(doc));
    }

    static final String DOC = "{'_id':'x','name':'Bob','age':42,'score':7.5,'tags':['a','b','c'],'nested':{'deep':{'v':1}},"
            + "'arr':[{'k':1},{'k':5}],'flag':true,'nothing':null,'map':{'red':1,'blue':2},'dot.ted':3}";

    @Test
    void implicitEqualityAndPaths() {
        assertTrue(m("{}", DOC), "the empty selector matches everything");
        assertTrue(m("{'name':'Bob'}", DOC));
        assertFalse(m("{'name':'bob'}", DOC));
        assertTrue(m("{'age':42.0}", DOC), "numbers collate by value");
        assertTrue(m("{'nested.deep.v':1}", DOC));
        assertTrue(m("{'nested':{'deep':{'v':1}}}", DOC), "nested objects are paths");
        assertFalse(m("{'nested':{'deep':{}}}", DOC), "an empty object is a value to compare with");
        assertTrue(m("{'tags.1':'b'}", DOC), "a numeric segment indexes an array");
        assertFalse(m("{'tags.9':'b'}", DOC));
        assertTrue(m("{'arr.1.k':5}", DOC));
        assertTrue(m("{'dot\\\\.ted':3}", DOC), "an escaped dot is part of the name");
        assertTrue(m("{'tags':['a','b','c']}", DOC));
        assertTrue(m("{'name':'Bob','age':42}", DOC), "several members are an implicit $and");
        assertFalse(m("{'name':'Bob','age':41}", DOC));
        assertTrue(m("{'nothing':null}", DOC));
    }

    @Test
    void comparisons() {
        assertTrue(m("{'age':{'$gt':41}}", DOC));
        assertFalse(m("{'age':{'$gt':42}}", DOC));
        assertTrue(m("{'age':{'$gte':42,'$lte':42}}", DOC));
        assertTrue(m("{'age':{'$lt':'a'}}", DOC), "numbers sort before strings");
        assertTrue(m("{'age':{'$ne':41}}", DOC));
        assertFalse(m("{'missing':{'$ne':1}}", DOC), "a terminal on a missing field is false");
        assertTrue(m("{'name':{'$gt':null}}", DOC));
        assertTrue(m("{'flag':{'$gt':false}}", DOC), "false < true");
        assertTrue(m("{'tags':{'$gt':'zzz'}}", DOC), "arrays sort after strings");
        assertTrue(m("{'name':{'$lt':'bob'}}", DOC) == false, "lowercase sorts before uppercase, as ICU");
    }

    @Test
    void setOperators() {
        assertTrue(m("{'name':{'$in':['Al','Bob']}}", DOC));
        assertFalse(m("{'name':{'$in':[]}}", DOC));
        assertTrue(m("{'tags':{'$in':['z','c']}}", DOC), "$in on an array field matches any element");
        assertTrue(m("{'name':{'$nin':['Al']}}", DOC));
        assertFalse(m("{'tags':{'$nin':['c']}}", DOC));
        assertTrue(m("{'tags':{'$nin':[]}}", DOC));
        assertTrue(m("{'tags':{'$all':['c','a']}}", DOC));
        assertFalse(m("{'tags':{'$all':['c','z']}}", DOC));
        assertFalse(m("{'tags':{'$all':[]}}", DOC));
        assertTrue(m("{'v':{'$all':[[1,2]]}}", "{'v':[1,2]}"), "a single array argument may equal the whole field");
        assertFalse(m("{'v':{'$all':[1]}}", "{'v':[1.0]}"), "$all compares exactly: 1 is not 1.0");
        assertTrue(m("{'tags':{'$size':3}}", DOC));
        assertFalse(m("{'name':{'$size':3}}", DOC));
    }

    @Test
    void existenceTypesAndStrings() {
        assertTrue(m("{'age':{'$exists':true}}", DOC));
        assertFalse(m("{'age':{'$exists':false}}", DOC));
        assertTrue(m("{'missing':{'$exists':false}}", DOC));
        assertFalse(m("{'missing':{'$exists':true}}", DOC));
        assertTrue(m("{'nothing':{'$exists':true}}", DOC), "null is a value");
        assertFalse(m("{'name.x':{'$exists':false}}", DOC), "a path through a string is a bad path, not a missing field");
        for (var t : List.of("name:string", "age:number", "score:number", "flag:boolean", "nothing:null", "tags:array", "nested:object")) {
            String[] p = t.split(":");
            assertTrue(m("{'" + p[0] + "':{'$type':'" + p[1] + "'}}", DOC), t);
        }
        assertTrue(m("{'name':{'$regex':'^B.b$'}}", DOC));
        assertTrue(m("{'name':{'$regex':'o'}}", DOC), "unanchored, as PCRE's re:run");
        assertFalse(m("{'age':{'$regex':'4'}}", DOC), "only strings match a regex");
        assertTrue(m("{'name':{'$beginsWith':'Bo'}}", DOC));
        assertTrue(m("{'age':{'$mod':[5,2]}}", DOC));
        assertFalse(m("{'score':{'$mod':[5,2]}}", DOC), "only integers");
        assertTrue(m("{'v':{'$mod':[5,-2]}}", "{'v':-7}"), "the remainder takes the dividend's sign");
    }

    @Test
    void logic() {
        assertTrue(m("{'$or':[{'name':'Al'},{'age':42}]}", DOC));
        assertTrue(m("{'$or':[]}", DOC), "an empty $or matches, as Mango");
        assertTrue(m("{'$and':[]}", DOC));
        assertFalse(m("{'$nor':[{'name':'Al'},{'age':42}]}", DOC));
        assertTrue(m("{'$nor':[{'name':'Al'},{'age':43}]}", DOC));
        assertTrue(m("{'age':{'$not':{'$gt':50}}}", DOC));
        assertTrue(m("{'$not':{'name':'Al'}}", DOC));
        assertTrue(m("{'name':{'$not':{'$regex':'^A'}}}", DOC));
        // Negations are pushed to the terminals, so a missing field does not satisfy a $not.
        assertFalse(m("{'$not':{'missing':{'$gt':1}}}", DOC));
        assertTrue(m("{'$not':{'missing':{'$exists':true}}}", DOC), "$not $exists:true is $exists:false");
        assertTrue(m("{'$not':{'$not':{'age':42}}}", DOC));
        assertTrue(m("{'$not':{'$and':[{'age':1},{'name':'Bob'}]}}", DOC));
    }

    @Test
    void subSelectors() {
        assertTrue(m("{'arr':{'$elemMatch':{'k':{'$gt':3}}}}", DOC));
        assertFalse(m("{'arr':{'$elemMatch':{'k':{'$gt':5}}}}", DOC));
        assertTrue(m("{'tags':{'$elemMatch':{'$eq':'b'}}}", DOC));
        assertTrue(m("{'arr':{'$allMatch':{'k':{'$gt':0}}}}", DOC));
        assertFalse(m("{'arr':{'$allMatch':{'k':{'$gt':1}}}}", DOC));
        assertFalse(m("{'v':{'$allMatch':{'$gt':0}}}", "{'v':[]}"), "never on an empty array");
        assertTrue(m("{'map':{'$keyMapMatch':{'$eq':'blue'}}}", DOC));
        assertFalse(m("{'map':{'$keyMapMatch':{'$eq':'green'}}}", DOC));
    }

    @Test
    void normalizedForm() {
        assertEquals("{\"$and\":[{\"a\":{\"$gt\":1}},{\"a\":{\"$lt\":5}}]}", Selector.parse(j("{'a':{'$gt':1,'$lt':5}}")).toString());
        assertEquals("{\"a.b\":{\"$eq\":1}}", Selector.parse(j("{'a':{'b':1}}")).toString());
        assertEquals("{\"$or\":[{\"a\":{\"$lte\":1}},{\"b\":{\"$ne\":2}}]}", Selector.parse(j("{'$not':{'a':{'$gt':1},'b':2}}")).toString());
        assertEquals("{\"a\":{\"$not\":{\"$size\":1}}}", Selector.parse(j("{'$not':{'a':{'$size':1}}}")).toString());
    }

    @Test
    void aPathologicalRegexCannotHoldTheMatcher() {
        // Exponential for a backtracking engine (java.util.regex did not finish); linear with RE2/J.
        String value = "a".repeat(100_000) + "!";
        assertFalse(m("{'v':{'$regex':'^(a+)+$'}}", "{'v':'" + value + "'}"));
        assertFalse(m("{'v':{'$regex':'(a|aa)*b'}}", "{'v':'" + value + "'}"));
        assertTrue(m("{'v':{'$regex':'(a+)+!$'}}", "{'v':'" + value + "'}"));
    }

    @Test
    void errorsAreMangos() {
        assertError("bad_arg", "Bad argument for operator $in: 1", "{'a':{'$in':1}}");
        assertError("bad_arg", null, "{'$and':{}}");
        assertError("bad_arg", null, "{'a':{'$exists':1}}");
        assertError("bad_arg", null, "{'a':{'$size':-1}}");
        assertError("bad_arg", null, "{'a':{'$mod':[0,1]}}");
        assertError("bad_arg", null, "{'a':{'$regex':'('}}");
        assertError("bad_arg", null, "{'a':{'$regex':'(a)\\\\1'}}"); // RE2 has no backreferences
        assertError("invalid_operator", "Invalid operator: $foo", "{'a':{'$foo':1}}");
        assertError("not_supported", "Unsupported operator: $where", "{'$where':1}");
        assertError("invalid_field_name", "Invalid field name: a..b", "{'a..b':1}");
        assertError("invalid_selector", "One or more conditions is missing a field name.", "{'$gt':1}");
        assertThrows(MangoException.class, () -> Selector.parse(j("[1]")));
    }

    static void assertError(String error, String reason, String selector) {
        MangoException e = assertThrows(MangoException.class, () -> Selector.parse(j(selector)));
        assertEquals(error, e.error());
        if (reason != null) assertEquals(reason, e.reason());
    }

    @Test
    void comparisonsUseTheViewCollation() throws Exception {
        // ICU puts "a" before "B"; raw code points would not.
        assertTrue(Selector.parse(j("{'name':{'$lt':'B'}}")).matches(j("{'name':'a'}")));
        assertTrue(Selector.parse(j("{'n':{'$eq':1}}")).matches(j("{'n':1.0}")), "1 and 1.0 collate equal");
        assertTrue(Selector.parse(j("{'v':{'$gt':'zzz'}}")).matches(j("{'v':[1]}")), "arrays sort after strings");
    }
}
