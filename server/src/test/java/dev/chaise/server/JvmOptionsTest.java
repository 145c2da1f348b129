package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * bin/jvm.options names methods for C2 ({@code -XX:CompileCommand}); HotSpot ignores a command
 * whose method does not exist, and {@code quiet} hides even that. So a rename would silently
 * drop the setting: every method named there must exist.
 */
class JvmOptionsTest {
    private static final Pattern COMMAND = Pattern.compile("^-XX:CompileCommand=\\w+,([\\w.$]+)::(\\w+)$");

    @Test
    void everyMethodACompileCommandNamesExists() throws IOException, ClassNotFoundException {
        Path options = Path.of(System.getProperty("user.dir")).resolveSibling("bin").resolve("jvm.options");
        List<String> lines = Files.readAllLines(options).stream().map(String::trim).filter(l -> l.startsWith("-XX:CompileCommand=")).toList();
        assertTrue(lines.stream().anyMatch(l -> COMMAND.matcher(l).matches()), "bin/jvm.options names no method for C2");
        for (String line : lines) {
            Matcher m = COMMAND.matcher(line);
            if (!m.matches()) continue; // quiet, and other commands without a method
            Class<?> type = Class.forName(m.group(1));
            String name = m.group(2);
            assertTrue(Arrays.stream(type.getDeclaredMethods()).map(Method::getName).anyMatch(name::equals),
                    () -> line + ": " + type.getName() + " has no method " + name);
        }
    }
}
