package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.http.config.HttpConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CouchDB's configuration layout: default.ini, then local.ini and local.d/*.ini, writes to the last file. */
class ConfigChainTest {
    @Test
    void anEtcDirectoryIsLocalIniThenLocalDByName(@TempDir Path etc) throws IOException {
        Files.writeString(etc.resolve("local.ini"), "[chttpd]\nport = 1\n[x]\nunknown = kept\n");
        Files.createDirectories(etc.resolve("local.d"));
        Files.writeString(etc.resolve("local.d/10-b.ini"), "[chttpd]\nport = 3\n");
        Files.writeString(etc.resolve("local.d/05-a.ini"), "[chttpd]\nport = 2\nbind_address = 0.0.0.0\n");
        Files.writeString(etc.resolve("local.d/notes.txt"), "not an ini");
        ConfigFiles files = ConfigFiles.resolve(List.of(etc));
        assertEquals(List.of(etc.resolve("local.ini"), etc.resolve("local.d/05-a.ini"), etc.resolve("local.d/10-b.ini")), files.read());
        assertEquals(etc.resolve("local.d/10-b.ini"), files.writeTo(), "CouchDB writes to the last file of the chain");
        IniConfig c = files.load();
        assertEquals("3", c.get("chttpd", "port").orElseThrow());
        assertEquals("0.0.0.0", c.get("chttpd", "bind_address").orElseThrow());
        assertEquals("kept", c.get("x", "unknown").orElseThrow(), "unknown keys are kept");
        assertEquals("1000000", c.get("couchdb", "max_document_size").orElseThrow(), "default.ini underneath");
    }

    @Test
    void anEmptyEtcDirectoryWritesToLocalIni(@TempDir Path etc) throws IOException {
        ConfigFiles files = ConfigFiles.resolve(List.of(etc));
        assertEquals(List.of(), files.read());
        assertEquals(etc.resolve("local.ini"), files.writeTo());
        IniConfigStore live = new IniConfigStore(files.load(), files.writeTo());
        live.set("log", "level", "debug", true);
        assertEquals("[log]\nlevel = debug\n", Files.readString(etc.resolve("local.ini")));
    }

    @Test
    void filesAreReadInOrderAndNoConfigKeepsChangesInMemory(@TempDir Path dir) throws IOException {
        Path a = Files.writeString(dir.resolve("a.ini"), "[log]\nlevel = debug\n");
        Path b = Files.writeString(dir.resolve("b.ini"), "[log]\nlevel = error\n");
        ConfigFiles files = ConfigFiles.resolve(List.of(a, b));
        assertEquals(b, files.writeTo());
        assertEquals("error", files.load().get("log", "level").orElseThrow());
        assertNull(ConfigFiles.resolve(List.of()).writeTo());
        assertThrows(IOException.class, () -> ConfigFiles.resolve(List.of(dir.resolve("missing.ini"))));
    }

    @Test
    void defaultIniHoldsTheDefaultsTheCodeFallsBackTo() {
        // Built over default.ini with a fallback that differs in every field: each value must come from the file.
        HttpConfig odd = new HttpConfig("10.9.9.9", 1, 2, 3, 4, "odd@node", "v", "sha", false, 5,
                new HttpConfig.Auth(6, false, 7, "sha512", null, "x", "y"), 8, 9);
        HttpConfig fromFile = HttpConfig.from(new IniConfigStore(ConfigFiles.defaults(), null), odd);
        HttpConfig d = HttpConfig.defaults();
        assertEquals(d.withVendorVersion("v"), fromFile);
    }

    /** Every key default.ini names (set or commented out) appears in the README's configuration section. */
    @Test
    void theReadmeListsEveryKey() throws IOException {
        String readme = Files.readString(Path.of(System.getProperty("user.dir")).resolveSibling("README.md"));
        int start = readme.indexOf("## Configuration");
        String section = readme.substring(start, readme.indexOf("\n## ", start + 1));
        String ini = new String(ConfigFiles.class.getResourceAsStream(ConfigFiles.DEFAULT_INI).readAllBytes());
        List<String> missing = new ArrayList<>();
        String current = null;
        Matcher m = Pattern.compile("(?m)^\\s*(?:\\[([a-z_]+)]|;?([a-z_]+) =)").matcher(ini);
        while (m.find()) {
            if (m.group(1) != null) {
                current = m.group(1);
            } else if (!Pattern.compile("\\[" + current + "][\\s\\S]*?\\b" + m.group(2) + "\\b").matcher(section).find()) {
                missing.add("[" + current + "] " + m.group(2));
            }
        }
        assertTrue(missing.isEmpty(), "README's configuration section lacks " + missing);
    }

    @Test
    void liveKeysFollowTheStore() {
        IniConfigStore live = new IniConfigStore(ConfigFiles.defaults(), null);
        List<String> seen = new ArrayList<>();
        live.addListener((s, k, v) -> seen.add(s + "/" + k + "=" + v));
        live.set("log", "level", "warning", false);
        live.delete("log", "level", false);
        assertEquals(List.of("log/level=warning", "log/level=null"), seen);
        assertEquals(ch.qos.logback.classic.Level.WARN, LogLevel.of("warning"));
        assertEquals(ch.qos.logback.classic.Level.OFF, LogLevel.of("none"));
        assertNull(LogLevel.of("loud"));
    }
}
