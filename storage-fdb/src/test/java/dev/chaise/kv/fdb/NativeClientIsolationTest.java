package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KvStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The embedded path must run where libfdb_c does not exist. fdb-java loads it in the class
 * initializer of {@code com.apple.foundationdb.FDB}, which most of fdb-java reaches; only the tuple
 * and subspace packages are plain Java. So outside {@code dev.chaise.kv.fdb}, main classes may
 * name fdb-java classes from those two packages only.
 *
 * <p>A class-level check: it cannot see a call into {@code Tuple.packWithVersionstamp}, which also
 * loads the library (use {@code Versionstamps} instead).
 */
class NativeClientIsolationTest {
    private static final Pattern FDB_CLASS = Pattern.compile("com/apple/foundationdb/([A-Za-z0-9_/$]+)");

    @Test
    void onlyTheFdbBackendNamesNativeBackedFdbJavaClasses() throws IOException {
        Path classes = Path.of(KvStore.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        assertTrue(Files.isDirectory(classes), "expected compiled main classes in a directory: " + classes);
        Path fdbPackage = classes.resolve("dev/chaise/kv/fdb");
        List<String> offenders = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                if (f.startsWith(fdbPackage)) continue;
                scanned++;
                // Class names sit in the constant pool as modified UTF-8; ISO-8859-1 keeps them intact for matching.
                Matcher m = FDB_CLASS.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
                while (m.find()) {
                    String name = m.group(1);
                    if (!name.startsWith("tuple/") && !name.startsWith("subspace/")) {
                        offenders.add(classes.relativize(f) + " -> com/apple/foundationdb/" + name);
                    }
                }
            }
        }
        assertTrue(scanned > 0, "no classes scanned under " + classes);
        assertEquals(List.of(), offenders, "classes outside dev.chaise.kv.fdb that may load libfdb_c");
    }
}
