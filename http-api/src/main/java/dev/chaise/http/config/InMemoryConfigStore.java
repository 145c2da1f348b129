package dev.chaise.http.config;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A {@link ConfigStore} that persists nothing and has nothing to re-read on {@link #reload}: for
 * tests, and as the base of the ini-backed one.
 */
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

    /** Replaces every value by those {@link #reread()} gives, telling the listeners of each key that changed. */
    @Override
    public void reload() {
        Map<String, ? extends Map<String, String>> fresh = reread();
        if (fresh == null) return;
        java.util.List<String[]> changed = new java.util.ArrayList<>();
        sections.forEach((section, kv) -> kv.forEach((key, value) -> {
            Map<String, String> now = fresh.get(section);
            if (now == null || !now.containsKey(key)) changed.add(new String[] {section, key, null});
        }));
        fresh.forEach((section, kv) -> kv.forEach((key, value) -> {
            if (!value.equals(get(section, key).orElse(null))) changed.add(new String[] {section, key, value});
        }));
        for (String[] c : changed) {
            if (c[2] == null) sections.get(c[0]).remove(c[1]);
            else put(c[0], c[1], c[2]);
        }
        for (String[] c : changed) listeners.forEach(l -> l.changed(c[0], c[1], c[2]));
    }

    /** The values as the store's source has them now, for {@link #reload}; null when there is no source (nothing to re-read). */
    protected Map<String, ? extends Map<String, String>> reread() {
        return null;
    }

    protected final void put(String section, String key, String value) {
        sections.computeIfAbsent(section, s -> new ConcurrentSkipListMap<>()).put(key, value);
    }

    /** Hook for stores that write edits somewhere; nothing here. */
    protected void persistSet(String section, String key, String value) {}

    protected void persistDelete(String section, String key) {}
}
