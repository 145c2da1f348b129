package dev.chaise.views.search;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Owns the blocks of search index files this process has read or written, least recently used
 * out first, bounded in bytes. Files never change once written and a FileId is never used twice,
 * so a cached block is never stale; a deleted file's blocks just age out.
 */
final class BlockCache {
    record Key(long dbId, long fileId, long blockNo) {}

    private final long maxBytes;
    private long bytes;
    private final LinkedHashMap<Key, byte[]> blocks = new LinkedHashMap<>(256, 0.75f, true);

    BlockCache(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    synchronized byte[] get(Key k) {
        return blocks.get(k);
    }

    synchronized void put(Key k, byte[] block) {
        byte[] was = blocks.put(k, block);
        bytes += block.length - (was == null ? 0 : was.length);
        var it = blocks.entrySet().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            Map.Entry<Key, byte[]> e = it.next();
            bytes -= e.getValue().length;
            it.remove();
        }
    }

    synchronized long bytes() {
        return bytes;
    }
}
