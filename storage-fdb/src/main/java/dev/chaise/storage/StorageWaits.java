package dev.chaise.storage;

import dev.chaise.kv.StoreTimer;

/** How long the document layer's operations take, whole: each a named wait of the one {@link StoreTimer}. */
public enum StorageWaits implements StoreTimer.Event {
    /** One write request's documents, every transaction and retry included. */
    SAVE_DOCUMENTS,
    /** One document read, with its branches if asked. */
    LOAD_DOCUMENT
}
