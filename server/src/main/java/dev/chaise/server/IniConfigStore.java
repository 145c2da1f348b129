package dev.chaise.server;

import dev.chaise.http.config.InMemoryConfigStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The live configuration: everything the ini files said, with changes made over
 * {@code /_node/_local/_config} written back to the last file given (CouchDB's local.ini). With
 * no file, changes last until the server stops.
 */
final class IniConfigStore extends InMemoryConfigStore {
    private final Path writeTo;

    IniConfigStore(IniConfig config, Path writeTo) {
        super(config.sections());
        this.writeTo = writeTo;
    }

    Path file() {
        return writeTo;
    }

    @Override
    protected void persistSet(String section, String key, String value) {
        write(section, key, value);
    }

    @Override
    protected void persistDelete(String section, String key) {
        write(section, key, null);
    }

    private void write(String section, String key, String value) {
        if (writeTo == null) return;
        try {
            IniConfig.persist(writeTo, section, key, value);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write [" + section + "] " + key + " to " + writeTo, e);
        }
    }
}
