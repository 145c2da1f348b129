package dev.chaise.http.config;

import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * The server's live configuration, as {@code /_node/_local/_config} shows and edits it. The
 * server module backs it with the ini files (persisting edits to the last one, as CouchDB writes
 * to local.ini); tests use {@link InMemoryConfigStore}.
 */
public interface ConfigStore {
    /** Every section and key, sorted. */
    SortedMap<String, SortedMap<String, String>> all();

    Map<String, String> section(String section);

    Optional<String> get(String section, String key);

    /** @param persist false for {@code X-Couch-Persist: false}: change the running value only */
    void set(String section, String key, String value, boolean persist);

    /** @return false if there was no such key */
    boolean delete(String section, String key, boolean persist);

    /**
     * {@code POST /_node/_local/_config/_reload}: reads the configuration files again, so that
     * changes made with {@code persist} false are dropped and edits made to the files apply, as
     * CouchDB's {@code config:reload} does. Listeners are told of every key that changed.
     *
     * @throws java.io.UncheckedIOException if the files cannot be read (nothing changes then)
     */
    void reload();

    /** Told of each change made through {@link #set} or {@link #delete}; {@code value} is null for a delete. */
    @FunctionalInterface
    interface Listener {
        void changed(String section, String key, String value);
    }

    /** For settings kept outside the store (log level, document size limits, cached flags) that must follow it. */
    void addListener(Listener l);
}
