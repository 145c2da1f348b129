package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.TupleBytes;
import java.util.ArrayList;
import java.util.List;

/**
 * A write transaction's per-document results as its transaction id keeps them (RFC D), so a retry
 * after {@code commit_unknown_result} answers exactly what the first attempt did. Ids and
 * replicated revisions are the request's own and are taken from it again; only what the write
 * decided is stored.
 */
final class WriteResults {
    /**
     * Encoded results stay under this, so the txid KV's value (the bytes escaped, so up to twice
     * as long, plus the time) stays under FDB's 100,000 bytes.
     */
    static final int MAX_RESULT_BYTES = 45_000;

    private WriteResults() {}

    /** If the error reasons do not fit, they are left out: a retry after 1021 then reports each error's generic text. */
    static byte[] encode(List<UpdateResult> results, boolean newEdits) {
        byte[] full = pack(results, newEdits, true);
        return full.length <= MAX_RESULT_BYTES ? full : pack(results, newEdits, false);
    }

    private static byte[] pack(List<UpdateResult> results, boolean newEdits, boolean reasons) {
        TupleBytes t = new TupleBytes(results.size() * 40);
        for (UpdateResult r : results) {
            t.add((Object) (r.ok() && newEdits ? r.rev().toString() : null));
            t.add((Object) (r.ok() ? null : r.error().kind().name()));
            t.add((Object) (r.ok() || !reasons ? null : r.error().reason()));
        }
        return t.toArray();
    }

    static List<UpdateResult> decode(byte[] bytes, List<DocUpdate> docs, boolean newEdits) {
        Tuple t = Tuple.fromBytes(bytes);
        List<UpdateResult> out = new ArrayList<>(docs.size());
        for (int i = 0; i < docs.size(); i++) {
            DocUpdate u = docs.get(i);
            String kind = t.getString(3 * i + 1);
            if (kind == null) {
                out.add(new UpdateResult(u.id(), newEdits ? RevId.parse(t.getString(3 * i)) : u.path().leaf(), null));
                continue;
            }
            StorageException.Kind k = StorageException.Kind.valueOf(kind);
            String reason = t.getString(3 * i + 2);
            if (reason == null) reason = k == StorageException.Kind.CONFLICT ? StorageException.conflict().reason() : k.error();
            out.add(new UpdateResult(u.id(), null, new StorageException(k, reason)));
        }
        return out;
    }
}
