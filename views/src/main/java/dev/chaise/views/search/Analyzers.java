package dev.chaise.views.search;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.ar.ArabicAnalyzer;
import org.apache.lucene.analysis.bg.BulgarianAnalyzer;
import org.apache.lucene.analysis.ca.CatalanAnalyzer;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.analysis.classic.ClassicAnalyzer;
import org.apache.lucene.analysis.cn.smart.SmartChineseAnalyzer;
import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.apache.lucene.analysis.core.LetterTokenizer;
import org.apache.lucene.analysis.core.SimpleAnalyzer;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.analysis.cz.CzechAnalyzer;
import org.apache.lucene.analysis.da.DanishAnalyzer;
import org.apache.lucene.analysis.de.GermanAnalyzer;
import org.apache.lucene.analysis.email.UAX29URLEmailAnalyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.es.SpanishAnalyzer;
import org.apache.lucene.analysis.eu.BasqueAnalyzer;
import org.apache.lucene.analysis.fa.PersianAnalyzer;
import org.apache.lucene.analysis.fi.FinnishAnalyzer;
import org.apache.lucene.analysis.fr.FrenchAnalyzer;
import org.apache.lucene.analysis.ga.IrishAnalyzer;
import org.apache.lucene.analysis.gl.GalicianAnalyzer;
import org.apache.lucene.analysis.hi.HindiAnalyzer;
import org.apache.lucene.analysis.hu.HungarianAnalyzer;
import org.apache.lucene.analysis.hy.ArmenianAnalyzer;
import org.apache.lucene.analysis.id.IndonesianAnalyzer;
import org.apache.lucene.analysis.it.ItalianAnalyzer;
import org.apache.lucene.analysis.ja.JapaneseAnalyzer;
import org.apache.lucene.analysis.lv.LatvianAnalyzer;
import org.apache.lucene.analysis.miscellaneous.ASCIIFoldingFilter;
import org.apache.lucene.analysis.miscellaneous.PerFieldAnalyzerWrapper;
import org.apache.lucene.analysis.nl.DutchAnalyzer;
import org.apache.lucene.analysis.no.NorwegianAnalyzer;
import org.apache.lucene.analysis.pt.PortugueseAnalyzer;
import org.apache.lucene.analysis.ro.RomanianAnalyzer;
import org.apache.lucene.analysis.ru.RussianAnalyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.sv.SwedishAnalyzer;
import org.apache.lucene.analysis.th.ThaiAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tr.TurkishAnalyzer;

/**
 * Nouveau's analyzers by name (its Lucene9AnalyzerFactory's list): lucene-analysis-common's,
 * {@code chinese} (smartcn) and {@code japanese} (kuromoji). {@code polish} needs Lucene's stempel
 * module, which Maven Central did not serve at our Lucene version, so it is refused as an unknown name.
 */
final class Analyzers {
    private static final Map<String, Supplier<Analyzer>> KNOWN = new HashMap<>();

    static {
        KNOWN.put("arabic", ArabicAnalyzer::new);
        KNOWN.put("armenian", ArmenianAnalyzer::new);
        KNOWN.put("basque", BasqueAnalyzer::new);
        KNOWN.put("bulgarian", BulgarianAnalyzer::new);
        KNOWN.put("catalan", CatalanAnalyzer::new);
        KNOWN.put("chinese", SmartChineseAnalyzer::new);
        KNOWN.put("cjk", CJKAnalyzer::new);
        KNOWN.put("classic", ClassicAnalyzer::new);
        KNOWN.put("czech", CzechAnalyzer::new);
        KNOWN.put("danish", DanishAnalyzer::new);
        KNOWN.put("dutch", DutchAnalyzer::new);
        KNOWN.put("email", UAX29URLEmailAnalyzer::new);
        KNOWN.put("english", EnglishAnalyzer::new);
        KNOWN.put("finnish", FinnishAnalyzer::new);
        KNOWN.put("french", FrenchAnalyzer::new);
        KNOWN.put("galician", GalicianAnalyzer::new);
        KNOWN.put("german", GermanAnalyzer::new);
        KNOWN.put("hindi", HindiAnalyzer::new);
        KNOWN.put("hungarian", HungarianAnalyzer::new);
        KNOWN.put("indonesian", IndonesianAnalyzer::new);
        KNOWN.put("irish", IrishAnalyzer::new);
        KNOWN.put("italian", ItalianAnalyzer::new);
        KNOWN.put("japanese", JapaneseAnalyzer::new);
        KNOWN.put("keyword", KeywordAnalyzer::new);
        KNOWN.put("latvian", LatvianAnalyzer::new);
        KNOWN.put("norwegian", NorwegianAnalyzer::new);
        KNOWN.put("persian", PersianAnalyzer::new);
        KNOWN.put("portugese", PortugueseAnalyzer::new); // Nouveau's spelling
        KNOWN.put("romanian", RomanianAnalyzer::new);
        KNOWN.put("russian", RussianAnalyzer::new);
        KNOWN.put("simple", SimpleAnalyzer::new);
        KNOWN.put("simple_asciifolding", SimpleAsciiFolding::new);
        KNOWN.put("spanish", SpanishAnalyzer::new);
        KNOWN.put("standard", StandardAnalyzer::new);
        KNOWN.put("swedish", SwedishAnalyzer::new);
        KNOWN.put("thai", ThaiAnalyzer::new);
        KNOWN.put("turkish", TurkishAnalyzer::new);
        KNOWN.put("whitespace", WhitespaceAnalyzer::new);
    }

    private Analyzers() {}

    /** A new analyzer of that name; Nouveau's 400 for a name it does not know. */
    static Analyzer named(String name) {
        Supplier<Analyzer> s = name == null ? null : KNOWN.get(name);
        if (s == null) throw SearchException.badRequest(name + " is not a valid analyzer name");
        return s.get();
    }

    /** The index's analyzer: its default, with its per-field ones. */
    static Analyzer of(SearchIndexDef def) {
        Analyzer dflt = named(def.defaultAnalyzer());
        if (def.fieldAnalyzers().isEmpty()) return dflt;
        Map<String, Analyzer> fields = new HashMap<>();
        def.fieldAnalyzers().forEach((f, a) -> fields.put(f, named(a)));
        return new PerFieldAnalyzerWrapper(dflt, fields);
    }

    /** {@code POST /_nouveau_analyze}: the tokens {@code analyzer} makes of {@code text}. */
    static java.util.List<String> tokens(String analyzer, String text) {
        java.util.List<String> out = new java.util.ArrayList<>();
        try (Analyzer a = named(analyzer); TokenStream ts = a.tokenStream("default", text)) {
            CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
            ts.reset();
            while (ts.incrementToken()) out.add(term.toString());
            ts.end();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e); // a string reader does not throw
        }
        return out;
    }

    /** Letters, lower-cased, accents folded to ASCII. */
    private static final class SimpleAsciiFolding extends Analyzer {
        @Override
        protected TokenStreamComponents createComponents(String fieldName) {
            Tokenizer t = new LetterTokenizer();
            return new TokenStreamComponents(t, new ASCIIFoldingFilter(new LowerCaseFilter(t)));
        }

        @Override
        protected TokenStream normalize(String fieldName, TokenStream in) {
            return new ASCIIFoldingFilter(new LowerCaseFilter(in));
        }
    }
}
