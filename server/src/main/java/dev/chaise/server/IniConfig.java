package dev.chaise.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * CouchDB's configuration format: {@code [section]} headers and {@code key = value} lines, with
 * {@code ;} comments. Later files and later lines override earlier ones, as in CouchDB.
 */
public final class IniConfig {
    private final Map<String, Map<String, String>> sections = new LinkedHashMap<>();

    public static IniConfig parse(String text, String source) {
        IniConfig c = new IniConfig();
        c.merge(text, source);
        return c;
    }

    public static IniConfig load(Path file) throws IOException {
        return parse(Files.readString(file), file.toString());
    }

    public void merge(String text, String source) {
        String section = null;
        int lineNo = 0;
        for (String raw : text.split("\r?\n", -1)) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith(";") || line.startsWith("#")) continue;
            if (line.startsWith("[")) {
                if (!line.endsWith("]")) throw new IllegalArgumentException(source + ":" + lineNo + ": bad section header: " + line);
                section = line.substring(1, line.length() - 1).strip();
                sections.computeIfAbsent(section, k -> new LinkedHashMap<>());
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0 || section == null) throw new IllegalArgumentException(source + ":" + lineNo + ": expected 'key = value' inside a [section]: " + line);
            String value = line.substring(eq + 1).strip();
            int comment = value.indexOf(" ;");
            if (comment >= 0) value = value.substring(0, comment).strip();
            set(section, line.substring(0, eq).strip(), value);
        }
    }

    public void set(String section, String key, String value) {
        sections.computeIfAbsent(section, k -> new LinkedHashMap<>()).put(key, value);
    }

    public Optional<String> get(String section, String key) {
        return Optional.ofNullable(sections.getOrDefault(section, Map.of()).get(key));
    }

    public String get(String section, String key, String fallback) {
        return get(section, key).orElse(fallback);
    }

    public Map<String, String> section(String name) {
        return Collections.unmodifiableMap(sections.getOrDefault(name, Map.of()));
    }
}
