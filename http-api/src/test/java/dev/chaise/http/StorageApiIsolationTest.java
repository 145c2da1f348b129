package dev.chaise.http;

import dev.chaise.http.wiring.ChaiseHttp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Data flows one way: the HTTP layer reaches documents, changes, {@code _local} documents,
 * attachments and security through storage's database façade ({@code dev.chaise.storage.Database}),
 * never through the KV seam or the revision-tree internals. A class-level check over the compiled
 * classes, as {@code NativeClientIsolationTest} guards fdb-java: a reference in a method
 * descriptor (a lambda over a KV transaction, say) counts as much as an import. The revision tree
 * lives in storage's own package, its algebra package-private; {@code EditBranch} is public only
 * because replicated updates carry one, so it is named here.
 */
class StorageApiIsolationTest {
    private static final Pattern FORBIDDEN = Pattern.compile("dev/chaise/kv/[A-Za-z0-9_$/]+|dev/chaise/storage/EditBranch\\b");

    @Test
    void httpNamesNoKvOrRevisionTreeClass() throws IOException {
        Path classes = Path.of(ChaiseHttp.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        assertTrue(Files.isDirectory(classes), "expected compiled main classes in a directory: " + classes);
        List<String> offenders = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                scanned++;
                // Class names sit in the constant pool as modified UTF-8; ISO-8859-1 keeps them intact for matching.
                Matcher m = FORBIDDEN.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
                TreeSet<String> found = new TreeSet<>();
                while (m.find()) found.add(m.group());
                for (String name : found) offenders.add(classes.relativize(f) + " -> " + name);
            }
        }
        assertTrue(scanned > 50, "too few classes scanned under " + classes + ": " + scanned);
        assertEquals(List.of(), offenders, "http-api classes that reach past storage's API");
    }
}
