package dev.chaise.views.js;

import dev.chaise.stats.Counter;
import dev.chaise.stats.Stats;
import java.util.Locale;

/**
 * CouchDB's query server metrics ({@code couchdb.query_server.*}: couch_os_process and
 * couch_proc_manager), counted by the in-process engine: a pooled JS context is CouchDB's query
 * server process, borrowing one is acquiring a process, and each call into it is a prompt.
 */
public final class QueryServerStats {
    /** What a call does, as CouchDB names the prompt's kind ({@code calls.map}, {@code time.ddoc_vdu}). */
    public enum Kind { SPAWN_PROC, MAP, REDUCE, ADD_FUN, DDOC_NEW, DDOC_VDU, DDOC_FILTER, DDOC_OTHER }

    private final Counter[] calls = new Counter[Kind.values().length];
    private final Counter[] micros = new Counter[Kind.values().length];
    final Counter acquired;
    final Counter starts;
    final Counter exits;
    final Counter errorExits;
    final Counter errors;
    final Counter prompts;

    public QueryServerStats(Stats s) {
        for (Kind k : Kind.values()) {
            String name = k.name().toLowerCase(Locale.ROOT);
            calls[k.ordinal()] = s.counter("couchdb.query_server.calls." + name, "number of " + name + " calls into the JavaScript engine");
            micros[k.ordinal()] = s.counter("couchdb.query_server.time." + name, "microseconds spent in " + name + " calls into the JavaScript engine");
        }
        acquired = s.counter("couchdb.query_server.acquired_processes", "number of JavaScript contexts taken from their pool for a task");
        starts = s.counter("couchdb.query_server.process_starts", "number of JavaScript contexts created");
        exits = s.counter("couchdb.query_server.process_exits", "number of JavaScript contexts closed");
        errorExits = s.counter("couchdb.query_server.process_error_exits", "number of JavaScript contexts closed because a call was stopped (time or memory limit)");
        errors = s.counter("couchdb.query_server.process_errors", "number of calls into the JavaScript engine that failed");
        prompts = s.counter("couchdb.query_server.process_prompts", "number of calls into the JavaScript engine");
    }

    /** {@code n} calls of {@code kind} (a batch of documents mapped at once counts each) that took {@code nanos} together. */
    void called(Kind kind, long n, long nanos) {
        calls[kind.ordinal()].add(n);
        micros[kind.ordinal()].add(nanos / 1000);
    }
}
