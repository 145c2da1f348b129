package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/operations.md lists CouchDB's metrics Chaise has and those it leaves out: the first list is
 * what {@code _stats} shows under CouchDB's names, and the two together are CouchDB 3.5's 206.
 */
class MetricsDocTest {
    private static final Pattern COUNT = Pattern.compile("\\*\\*CouchDB's metrics Chaise has: (\\d+) of CouchDB 3\\.5's 206\\*\\*");
    private static final Pattern LEFT = Pattern.compile("\\*\\*Left out: (\\d+)\\*\\*");
    private static final Pattern PATH = Pattern.compile("`([a-z_0-9]+(?:\\.[A-Za-z_0-9]+)+)`");

    @Test
    void theListsAreWhatStatsShows() throws Exception {
        Path doc = Path.of("..", "docs", "operations.md");
        if (!Files.exists(doc)) doc = Path.of("docs", "operations.md");
        String text = Files.readString(doc);
        Matcher count = COUNT.matcher(text);
        Matcher left = LEFT.matcher(text);
        assertTrue(count.find() && left.find(), "the two headings");
        Set<String> covered = paths(text.substring(count.end(), left.start()), 2); // | group | paths | where |
        Set<String> leftOut = paths(text.substring(left.end(), text.indexOf("Chaise's own (`chaise.*`)")), 1); // | paths | why |
        assertEquals(Integer.parseInt(count.group(1)), covered.size(), covered.toString());
        assertEquals(Integer.parseInt(left.group(1)), leftOut.size(), leftOut.toString());
        assertEquals(206, covered.size() + leftOut.size());
        Set<String> both = new TreeSet<>(covered);
        both.retainAll(leftOut);
        assertTrue(both.isEmpty(), "in both lists: " + both);

        Set<String> shown = new TreeSet<>();
        try (HttpTestServer s = new HttpTestServer()) {
            walk(s.get("/_node/_local/_stats", "Authorization", ADMIN).status(200).json(), "", shown);
        }
        shown.removeIf(p -> p.startsWith("chaise."));
        Set<String> expected = new TreeSet<>(covered);
        expected.removeIf(p -> p.startsWith("couch_log.level.")); // counted by the server's Logback appender (server's LogCountsTest)
        assertEquals(expected, shown);
    }

    /** The paths in one column of a table's rows. */
    private static Set<String> paths(String section, int column) {
        Set<String> out = new TreeSet<>();
        for (String line : section.split("\n")) {
            if (!line.startsWith("| ")) continue;
            Matcher m = PATH.matcher(line.split("\\|")[column]);
            while (m.find()) out.add(m.group(1));
        }
        return out;
    }

    private static void walk(JsonNode n, String path, Set<String> out) {
        if (n.has("type") && n.has("desc") && n.has("value")) {
            out.add(path);
            return;
        }
        n.properties().forEach(e -> walk(e.getValue(), path.isEmpty() ? e.getKey() : path + "." + e.getKey(), out));
    }
}
