package dev.chaise.server;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * No package cycles among the main classes of all modules. Here because server's test classpath
 * holds every other module's main classes. A package is a unit of layering only if its
 * dependencies run one way: {@code storage.rev} needing {@code storage} while {@code storage}
 * needs it made the two one package in all but name.
 */
class PackageCyclesTest {
    private static final String ROOT = "dev.chaise";

    /**
     * One slice per package: {@code (**)} captures all of the package below {@code dev.chaise}, so
     * {@code http} and {@code http.auth} are two slices (the fixture test below shows it),
     * where {@code (*)..} would fold every subpackage into its top package and hide such cycles.
     */
    private static final ArchRule NO_CYCLES = slices().matching(ROOT + ".(**)").namingSlices("$1").should().beFreeOfCycles();

    @Test
    void mainClassesFormNoPackageCycle() {
        JavaClasses main = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests()).importPackages(ROOT);
        // A check over a partial classpath would pass for the wrong reason.
        Set<String> packages = main.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
        for (String module : List.of("kv", "storage", "views", "replicator", "http", "server")) {
            assertTrue(packages.contains(ROOT + "." + module), "main classes of " + ROOT + "." + module + " not on the classpath: " + packages);
        }
        assertTrue(packages.stream().noneMatch(p -> p.startsWith(ROOT + ".archfixture")), "test classes were imported");
        List<Cycle> cycles = cycles(NO_CYCLES.evaluate(main));
        if (!cycles.isEmpty()) {
            fail(cycles.size() + " package cycles among the main classes (packages below " + ROOT + "):\n  "
                    + cycles.stream().map(Cycle::path).collect(Collectors.joining("\n  "))
                    + "\nA dependency of each step, to start from:\n"
                    + cycles.stream().map(c -> c.path() + "\n" + String.join("\n", c.steps())).collect(Collectors.joining("\n")));
        }
    }

    /** The rule can fail: two fixture packages of the test tree, a parent and its subpackage, form a cycle. */
    @Test
    void aPackageAndItsSubpackageInACycleAreReported() {
        JavaClasses fixture = new ClassFileImporter().importPackages(ROOT + ".archfixture");
        List<Cycle> cycles = cycles(NO_CYCLES.evaluate(fixture));
        assertEquals(List.of("archfixture.a -> archfixture.a.b -> archfixture.a"), cycles.stream().map(Cycle::path).toList());
        assertEquals(2, cycles.getFirst().steps().size(), cycles.getFirst().steps().toString());
    }

    /** A cycle as {@code a -> b -> a}, and for each step the first dependency ArchUnit names. */
    private record Cycle(String path, List<String> steps) {}

    /**
     * The cycles in ArchUnit's report, sorted by path. Each detail opens with the cycle
     * ({@code Cycle detected: Slice a -> Slice b -> Slice a}), then numbers the steps
     * ({@code 1. Dependencies of Slice a}), each followed by its dependencies ({@code - ...}).
     */
    private static List<Cycle> cycles(EvaluationResult result) {
        List<Cycle> out = new ArrayList<>();
        for (String detail : result.getFailureReport().getDetails()) {
            String[] parts = detail.split("\n\\s*\\d+\\. Dependencies of ");
            String path = parts[0].replaceFirst("^Cycle detected: ", "").replace("Slice ", "").replaceAll("\\s+", " ").trim();
            List<String> steps = new ArrayList<>();
            for (int i = 1; i < parts.length; i++) {
                String[] lines = parts[i].split("\n");
                steps.add("    " + lines[0].replace("Slice ", "") + ": " + (lines.length > 1 ? lines[1].trim().replaceFirst("^- ", "") : "?"));
            }
            out.add(new Cycle(path, steps));
        }
        out.sort(Comparator.comparing(Cycle::path));
        return out;
    }
}
