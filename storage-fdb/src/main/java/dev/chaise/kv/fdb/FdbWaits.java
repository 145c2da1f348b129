package dev.chaise.kv.fdb;

import dev.chaise.kv.StoreTimer;

/** Waits only the fdb backend has: these are local on the embedded engine, futures on a cluster. */
public enum FdbWaits implements StoreTimer.Event { VERSIONSTAMP, APPROXIMATE_SIZE }
