package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/** Documents shaped as couchbench writes them: about 300 bytes of JSON, a few members, one array. */
public final class BenchDocs {
    private static final String[] TYPES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"};
    private static final String FILL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    private BenchDocs() {}

    public static ObjectNode doc(int i) {
        Random rand = new Random(i);
        ObjectNode d = Json.MAPPER.createObjectNode();
        d.put("_id", "b" + String.format("%07d", i));
        d.put("type", TYPES[i % TYPES.length]);
        d.put("n", i);
        d.put("score", rand.nextInt(1_000_000));
        d.putArray("tags").add(TYPES[(i * 7) % 10]).add("x" + (i % 100));
        d.put("name", "user-" + i);
        d.put("created", "2024-01-01T00:00:00Z");
        StringBuilder t = new StringBuilder();
        for (int k = d.toString().length(); k < 300; k++) t.append(FILL.charAt(rand.nextInt(FILL.length())));
        d.put("text", t.toString());
        return d;
    }

    /** Writes documents 0 to {@code n - 1} into {@code db}, 500 to a transaction; their ids in order. */
    public static String[] load(Database db, int n) {
        String[] ids = new String[n];
        List<DocUpdate> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ObjectNode d = doc(i);
            ids[i] = d.get("_id").asText();
            batch.add(DocUpdate.edit(ids[i], null, false, d));
            if (batch.size() == 500 || i == n - 1) {
                for (UpdateResult r : db.updateUnchecked(batch, true)) if (!r.ok()) throw r.error();
                batch.clear();
            }
        }
        return ids;
    }

    /** Deletes a benchmark's data directory. */
    public static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
