package dev.chaise.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.chaise.storage.Database;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Main code above storage writes documents only through the door ({@code SecuredDb}), which
 * applies the database's rules: no class outside {@code dev.chaise.storage} calls
 * {@link Database}'s writes, which apply none. Storage's own tests may; main code may not.
 */
class DatabaseDoorTest {
    /** Database's methods that write and apply no rule of the database's policy. */
    static final Set<String> UNCHECKED = Set.of("updateUnchecked", "updateAllOrNothingUnchecked", "writeLocal", "putLocal", "purge",
            "setSecurity", "setRevsLimit", "setPurgedInfosLimit", "storeAttachment", "readAttachment");

    static final ArchRule ONLY_THROUGH_THE_DOOR = noClasses().that().resideOutsideOfPackage("dev.chaise.storage")
            .should().callMethodWhere(DescribedPredicate.describe("a write of Database that applies no rule",
                    (JavaMethodCall call) -> call.getTargetOwner().isEquivalentTo(Database.class) && UNCHECKED.contains(call.getName())));

    @Test
    void mainCodeWritesOnlyThroughTheDoor() {
        JavaClasses main = new ClassFileImporter().withImportOption(new ImportOption.DoNotIncludeTests()).importPackages("dev.chaise");
        assertTrue(main.contain("dev.chaise.http.handlers.DocumentHandlers") && main.contain("dev.chaise.replicator.LocalPeer"),
                "the modules above storage are not on the classpath");
        EvaluationResult r = ONLY_THROUGH_THE_DOOR.evaluate(main);
        assertEquals(java.util.List.of(), r.getFailureReport().getDetails(), "writes past SecuredDb");
    }

    @Test
    void aWritePastTheDoorIsReported() {
        EvaluationResult r = ONLY_THROUGH_THE_DOOR.evaluate(new ClassFileImporter().importPackages("dev.chaise.archfixture.door"));
        assertEquals(1, r.getFailureReport().getDetails().size(), r.getFailureReport().toString());
        assertTrue(r.getFailureReport().getDetails().getFirst().contains("Bypass.write"), r.getFailureReport().toString());
    }
}
