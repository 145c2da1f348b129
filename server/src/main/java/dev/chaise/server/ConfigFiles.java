package dev.chaise.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * CouchDB's configuration chain. {@code default.ini} (in the jar: every key Chaise reads, with its
 * default) comes first; then each {@code --config} path in order: a file is read as it is; a
 * directory is an etc directory, read as {@code DIR/local.ini} then {@code DIR/local.d/*.ini}
 * sorted by name. Later values win. Changes made over {@code _config} are written to the last file
 * of the chain, as CouchDB does: {@code local.ini}, or the last {@code local.d} file when there is
 * one (the Docker image writes {@code local.d/docker.ini}, which lives in a volume).
 *
 * @param read the files to read, in order (default.ini not included)
 * @param writeTo where changes go; null when no {@code --config} was given (changes live in memory)
 */
public record ConfigFiles(List<Path> read, Path writeTo) {
    public static final String DEFAULT_INI = "/default.ini";

    /** @param paths the {@code --config} arguments, already resolved against the caller's directory */
    public static ConfigFiles resolve(List<Path> paths) throws IOException {
        List<Path> read = new ArrayList<>();
        Path writeTo = null;
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                Path local = p.resolve("local.ini");
                if (Files.isRegularFile(local)) read.add(local);
                writeTo = local;
                Path d = p.resolve("local.d");
                if (Files.isDirectory(d)) {
                    try (Stream<Path> s = Files.list(d)) {
                        List<Path> inis = s.filter(f -> f.getFileName().toString().endsWith(".ini") && Files.isRegularFile(f)).sorted().toList();
                        read.addAll(inis);
                        if (!inis.isEmpty()) writeTo = inis.get(inis.size() - 1);
                    }
                }
            } else if (Files.isRegularFile(p)) {
                read.add(p);
                writeTo = p;
            } else {
                throw new IOException("no such config file or directory: " + p);
            }
        }
        return new ConfigFiles(List.copyOf(read), writeTo);
    }

    /** default.ini, then every file of the chain. */
    public IniConfig load() throws IOException {
        IniConfig c = defaults();
        for (Path f : read) c.merge(Files.readString(f), f.toString());
        return c;
    }

    /** The values of the jar's default.ini alone. */
    public static IniConfig defaults() {
        try (InputStream in = ConfigFiles.class.getResourceAsStream(DEFAULT_INI)) {
            if (in == null) throw new IllegalStateException("default.ini is missing from the jar");
            return IniConfig.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "default.ini");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
