package dev.chaise.kv.fdb;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncIterable;
import com.apple.foundationdb.async.AsyncIterator;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * An fdb-java {@link Transaction} stand-in (a dynamic proxy), so the wrapper is tested without
 * {@code libfdb_c}. It records every call as {@code name(args)} and answers from configurable futures.
 */
final class FakeFdbTransaction {
    final List<String> calls = new ArrayList<>();
    final Map<String, CompletableFuture<byte[]>> values = new HashMap<>();
    List<KeyValue> rangeRows = List.of();
    /** Completed by the test to release a range read's first batch; null means ready at once. */
    CompletableFuture<Boolean> firstBatch;
    boolean rangeCancelled;
    CompletableFuture<Void> commitResult = CompletableFuture.completedFuture(null);
    CompletableFuture<byte[]> versionstampResult = new CompletableFuture<>();
    CompletableFuture<Void> watchResult = new CompletableFuture<>();
    long committedVersion = -1;
    RuntimeException syncFailure;

    Transaction transaction() {
        return (Transaction) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Transaction.class},
                (proxy, m, args) -> handle("", proxy, m.getName(), args == null ? new Object[0] : args));
    }

    private Object handle(String prefix, Object proxy, String name, Object[] args) {
        switch (name) {
            case "toString": return "FakeFdbTransaction";
            case "hashCode": return System.identityHashCode(proxy);
            case "equals": return proxy == args[0];
            default: break;
        }
        calls.add(prefix + name + "(" + describe(args) + ")");
        if (syncFailure != null && !name.equals("snapshot") && !name.equals("close")) throw syncFailure;
        return switch (name) {
            case "snapshot" -> Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {ReadTransaction.class},
                    (p, m, a) -> handle("snapshot.", p, m.getName(), a == null ? new Object[0] : a));
            case "get" -> values.getOrDefault(str((byte[]) args[0]), CompletableFuture.completedFuture(null));
            case "getReadVersion" -> CompletableFuture.completedFuture(42L);
            case "getKey" -> CompletableFuture.completedFuture(((com.apple.foundationdb.KeySelector) args[0]).getKey());
            case "getRange" -> iterable();
            case "getVersionstamp" -> versionstampResult;
            case "commit" -> commitResult;
            case "getCommittedVersion" -> committedVersion;
            case "getApproximateSize" -> CompletableFuture.completedFuture(123L);
            case "watch" -> watchResult;
            // Options are recorded as calls too: option(code).
            case "options" -> new com.apple.foundationdb.TransactionOptions((code, param) -> calls.add("option(" + code + ")"));
            default -> null;
        };
    }

    private AsyncIterable<KeyValue> iterable() {
        return new AsyncIterable<>() {
            @Override
            public AsyncIterator<KeyValue> iterator() {
                return new AsyncIterator<>() {
                    int i;

                    @Override
                    public CompletableFuture<Boolean> onHasNext() {
                        CompletableFuture<Boolean> ready = CompletableFuture.completedFuture(i < rangeRows.size());
                        return i == 0 && firstBatch != null ? firstBatch.thenCompose(x -> ready) : ready;
                    }

                    @Override
                    public boolean hasNext() {
                        return onHasNext().join();
                    }

                    @Override
                    public KeyValue next() {
                        return rangeRows.get(i++);
                    }

                    @Override
                    public void cancel() {
                        rangeCancelled = true;
                    }
                };
            }

            @Override
            public CompletableFuture<List<KeyValue>> asList() {
                return CompletableFuture.completedFuture(rangeRows);
            }
        };
    }

    static String str(byte[] b) {
        return new String(b, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static String describe(Object[] args) {
        java.util.StringJoiner sj = new java.util.StringJoiner(", ");
        for (Object a : args) {
            if (a instanceof byte[] b) sj.add(b.length > 32 ? "<" + b.length + " bytes>" : dev.chaise.kv.Keys.printable(b));
            else sj.add(String.valueOf(a));
        }
        return sj.toString();
    }
}
