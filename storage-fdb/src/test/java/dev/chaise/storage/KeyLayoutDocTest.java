package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/key-layout.md} draws every subspace tag; {@link KeySpace} defines them. This test
 * keeps the two the same, so the document cannot go stale: every {@code N NAME} in the drawing is
 * a constant of that name and value, every constant is drawn, and so is every system name.
 */
class KeyLayoutDocTest {
    /** A tag in the tree: after a branch or an opening parenthesis, a number and an upper-case name. */
    private static final Pattern TAG = Pattern.compile("(?:── |\\()(\\d+) ([A-Z][A-Z_]+)(?=[ ,\\n]|$)");

    @Test
    void theKeyLayoutDocumentDrawsExactlyKeySpacesTags() throws Exception {
        String tree = drawing();
        Map<String, Long> drawn = new TreeMap<>();
        Matcher m = TAG.matcher(tree);
        while (m.find()) {
            Long was = drawn.put(m.group(2), Long.parseLong(m.group(1)));
            if (was != null) assertEquals(was, drawn.get(m.group(2)), m.group(2) + " is drawn with two values");
        }
        Map<String, Long> defined = new TreeMap<>();
        List<String> names = new ArrayList<>();
        for (Class<?> c : classes()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) || !Modifier.isPublic(f.getModifiers())) continue;
                if (f.getType() == long.class) {
                    Long was = defined.put(f.getName(), f.getLong(null));
                    assertEquals(null, was, f.getName() + " is defined twice: a drawing could not tell them apart");
                } else if (f.getType() == String.class) {
                    names.add((String) f.get(null));
                }
            }
        }
        assertTrue(defined.size() > 25, "found " + defined.size() + " tags");
        assertEquals(defined, drawn, "docs/key-layout.md against KeySpace");
        for (String n : names) assertTrue(tree.contains("\"" + n + "\""), "the system name \"" + n + "\" is drawn");
    }

    private static List<Class<?>> classes() {
        List<Class<?>> out = new ArrayList<>();
        out.add(KeySpace.class);
        out.addAll(List.of(KeySpace.class.getDeclaredClasses()));
        return out;
    }

    /** The first fenced block of docs/key-layout.md: the tree. */
    private static String drawing() throws IOException {
        Path doc = Path.of("..", "docs", "key-layout.md");
        if (!Files.exists(doc)) doc = Path.of("docs", "key-layout.md");
        String text = Files.readString(doc);
        int start = text.indexOf("```\n");
        int end = text.indexOf("```", start + 4);
        assertTrue(start >= 0 && end > start, "a fenced tree in " + doc);
        return text.substring(start + 4, end);
    }
}
