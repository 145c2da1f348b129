package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.StoredDoc;
import dev.chaise.views.search.SearchException;
import dev.chaise.views.search.SearchIndexDef;
import dev.chaise.views.search.SearchIndexes;
import dev.chaise.views.search.SearchRequest;
import dev.chaise.views.search.SearchRunner;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A {@code _find} on a Mango nouveau index, as CouchDB 3.5's {@code mango_cursor_nouveau} runs
 * it: the selector as a Lucene query ({@link TextQuery}), searched a page at a time
 * ({@code limit + skip} hits, at most {@link #MAX_LIMIT}, Nouveau's {@code max_limit}) in the
 * order of {@code sort} (each field escaped as the index names it, {@code desc} as
 * {@code -field}) or by relevance; each hit's document is read and matched against the selector,
 * and only matches count towards {@code skip} and {@code limit}. The bookmark is Nouveau's, after
 * the last hit read.
 */
final class NouveauCursor {
    /** {@code [nouveau] max_limit}: no page, and no {@code _find}, returns more. */
    static final int MAX_LIMIT = 200;

    private NouveauCursor() {}

    /** @param bookmark the next page's start; null when no hit was read and none was given */
    record Outcome(List<ObjectNode> docs, long docsExamined, long evaluated, String bookmark) {}

    /** Nouveau's sort: the Mango fields escaped, {@code -} for descending; null for relevance. */
    static List<String> sort(List<Sort.Field> sort) {
        if (sort == null || sort.isEmpty()) return null;
        List<String> out = new ArrayList<>();
        for (Sort.Field f : sort) out.add((f.descending() ? "-" : "") + TextQuery.escapeUser(f.name()));
        return out;
    }

    static Outcome run(SearchIndexes search, Database db, Find.Query q, NouveauIndex idx) {
        String query = TextQuery.convert(q.selector());
        String bookmark = q.bookmark() == null || q.bookmark().equals("nil") ? null : checked(q.bookmark());
        List<ObjectNode> out = new ArrayList<>();
        long examined = 0;
        long evaluated = 0;
        int limit = Math.min(MAX_LIMIT, q.limit());
        int skip = q.skip();
        if (query.isEmpty() || limit == 0) return new Outcome(out, 0, 0, bookmark);
        SearchIndexDef def = search.definition(db, idx.ddoc(), idx.name());
        List<String> sort = sort(q.sort());
        Set<String> seen = new HashSet<>();
        while (limit > 0) {
            SearchRequest req = new SearchRequest(query, null, Math.min(MAX_LIMIT, limit + skip), sort, null, null, 10,
                    !q.readAsIs(), bookmark, false, q.partition());
            List<SearchRunner.Hit> hits;
            try {
                hits = search.search(db, def, req).hits();
            } catch (SearchException e) {
                // mango_cursor_nouveau's nouveau_search_error; a query Lucene refuses was written from the client's selector
                throw new MangoException(e.status() == 400 ? 400 : 500, "nouveau_search_error", e.error() + ": " + e.reason());
            }
            if (hits.isEmpty()) break;
            List<String> ids = new ArrayList<>(hits.size());
            for (SearchRunner.Hit h : hits) ids.add(h.id());
            List<StoredDoc> docs = db.read(r -> r.winners(ids, null, q.conflicts()));
            for (int i = 0; i < hits.size() && limit > 0; i++) {
                bookmark = SearchRunner.bookmarkAfter(hits.get(i));
                StoredDoc d = docs.get(i);
                if (d == null) continue; // deleted since it was indexed
                examined++;
                ObjectNode doc = q.conflicts() ? DocumentJson.renderWithConflicts(d) : DocumentJson.render(d);
                evaluated++;
                if (!q.selector().matches(doc) || !seen.add(d.id())) continue;
                if (skip > 0) {
                    skip--;
                    continue;
                }
                out.add(q.fields() == null ? doc : Find.project(doc, q.fields()));
                limit--;
            }
        }
        return new Outcome(out, examined, evaluated, bookmark);
    }

    /** A bookmark that is not Nouveau's is Mango's invalid_bookmark, before any search. */
    private static String checked(String bookmark) {
        if (!SearchRunner.isBookmark(bookmark)) throw Bookmark.invalid(bookmark);
        return bookmark;
    }
}
