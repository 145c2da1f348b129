package dev.chaise.http.config;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** A {@link ConfigStore} that persists nothing: for tests, and as the base of the ini-backed one. */
public class InMemoryConfigStore implements ConfigStore {
    private final ConcurrentSkipListMap<String, ConcurrentSkipListMap<String, String>> sections = new ConcurrentSkipListMap<>();
    private final java.util.List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void addListener(Listener l) {
        listeners.add(l);
    }

    public InMemoryConfigStore() {}

    public InMemoryConfigStore(Map<String, ? extends Map<String, String>> initial) {
        initial.forEach((s, kv) -> kv.forEach((k, v) -> put(s, k, v)));
    }

    @Override
    public SortedMap<String, SortedMap<String, String>> all() {
        SortedMap<String, SortedMap<String, String>> out = new TreeMap<>();
        sections.forEach((s, kv) -> {
            if (!kv.isEmpty()) out.put(s, Collections.unmodifiableSortedMap(new TreeMap<>(kv)));
        });
        return Collections.unmodifiableSortedMap(out);
    }

    @Override
    public Map<String, String> section(String section) {
        var kv = sections.get(section);
        return kv == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(kv));
    }

    @Override
    public Optional<String> get(String section, String key) {
        var kv = sections.get(section);
        return kv == null ? Optional.empty() : Optional.ofNullable(kv.get(key));
    }

    @Override
    public void set(String section, String key, String value, boolean persist) {
        if (persist) persistSet(section, key, value); // a write that fails changes nothing
        put(section, key, value);
        listeners.forEach(l -> l.changed(section, key, value));
    }

    @Override
    public boolean delete(String section, String key, boolean persist) {
        var kv = sections.get(section);
        if (kv == null || !kv.containsKey(key)) return false;
        if (persist) persistDelete(section, key);
        kv.remove(key);
        listeners.forEach(l -> l.changed(section, key, null));
        return true;
    }

    protected final void put(String section, String key, String value) {
        sections.computeIfAbsent(section, s -> new ConcurrentSkipListMap<>()).put(key, value);
    }

    /** Hook for stores that write edits somewhere; nothing here. */
    protected void persistSet(String section, String key, String value) {}

    protected void persistDelete(String section, String key) {}
}
