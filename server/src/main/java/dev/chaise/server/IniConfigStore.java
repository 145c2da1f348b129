package dev.chaise.server;

import dev.chaise.http.config.InMemoryConfigStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The live configuration: everything the ini files said, with changes made over
 * {@code /_node/_local/_config} written back to the last file given (CouchDB's local.ini). With
 * no file, changes last until the server stops. {@link #reload} reads the files again and then
 * applies what the server derives from them ({@link Main#derive}).
 */
final class IniConfigStore extends InMemoryConfigStore {
    private final Path writeTo;
    private final ConfigFiles files;
    private final Consumer<IniConfigStore> afterReload;

    /** A store with nothing to re-read. */
    IniConfigStore(IniConfig config, Path writeTo) {
        this(config, writeTo, null, s -> { });
    }

    /**
     * @param files read again by {@link #reload}; null for nothing to re-read
     * @param afterReload what the server derives from the files, applied again after a reload
     */
    IniConfigStore(IniConfig config, Path writeTo, ConfigFiles files, Consumer<IniConfigStore> afterReload) {
        super(config.sections());
        this.writeTo = writeTo;
        this.files = files;
        this.afterReload = afterReload;
    }

    @Override
    public void reload() {
        super.reload();
        afterReload.accept(this);
    }

    @Override
    protected Map<String, ? extends Map<String, String>> reread() {
        if (files == null) return null;
        try {
            return files.load().sections();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
