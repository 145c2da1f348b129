package dev.chaise.kv;

import java.util.Iterator;

/**
 * A range read streamed in batches. Close it if you stop before the end; the transaction also
 * closes every iterator it handed out when it ends.
 */
public interface RangeIterator extends Iterator<KeyValue>, AutoCloseable {
    @Override
    void close();
}
