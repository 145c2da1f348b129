package dev.chaise.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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

    /** Every section, in file order. */
    public Map<String, Map<String, String>> sections() {
        return Collections.unmodifiableMap(sections);
    }

    /**
     * Edits {@code file} in place so that {@code [section] key} is {@code value}, or is gone when
     * {@code value} is null, leaving every other line (comments included) as it was. This is how
     * CouchDB writes config changes back to local.ini. The file is replaced atomically.
     */
    public static void persist(Path file, String section, String key, String value) throws IOException {
        List<String> lines = Files.exists(file) ? new ArrayList<>(Files.readAllLines(file)) : new ArrayList<>();
        String current = null;
        int lastLineOfSection = -1;
        boolean done = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.startsWith("[") && line.endsWith("]")) {
                current = line.substring(1, line.length() - 1).strip();
                if (current.equals(section)) lastLineOfSection = i;
                continue;
            }
            if (!section.equals(current) || line.isEmpty() || line.startsWith(";") || line.startsWith("#")) continue;
            lastLineOfSection = i;
            int eq = line.indexOf('=');
            if (eq > 0 && line.substring(0, eq).strip().equals(key)) {
                if (value == null) {
                    lines.remove(i--);
                    lastLineOfSection = i;
                } else if (!done) {
                    lines.set(i, key + " = " + value);
                    done = true;
                } else {
                    lines.remove(i--); // a later duplicate would override the new value
                }
            }
        }
        if (value != null && !done) {
            if (lastLineOfSection < 0) {
                if (!lines.isEmpty() && !lines.get(lines.size() - 1).isBlank()) lines.add("");
                lines.add("[" + section + "]");
                lines.add(key + " = " + value);
            } else {
                lines.add(lastLineOfSection + 1, key + " = " + value);
            }
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, lines);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
