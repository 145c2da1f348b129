package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.Random;

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
}
