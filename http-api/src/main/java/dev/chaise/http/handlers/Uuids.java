package dev.chaise.http.handlers;

import dev.chaise.http.config.ConfigStore;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ids the server makes up ({@code GET /_uuids}, a {@code POST}ed document without {@code _id}, an
 * update function's {@code req.uuid}) by {@code [uuids] algorithm}, read at each use as CouchDB's
 * {@code couch_uuids} reads it:
 *
 * <ul>
 *   <li>{@code random} (CouchDB's default, and for an unknown name): 32 random hex digits;
 *   <li>{@code sequential}: a random prefix of 26 hex digits and a 6-digit counter that grows by a
 *       random 1 to 0xFFD, a new prefix when it would pass 0xFFF000: ids sort in the order made;
 *   <li>{@code utc_random}: the time in microseconds as 14 hex digits, then 18 random ones;
 *   <li>{@code utc_id}: the same time, then {@code [uuids] utc_id_suffix}.
 * </ul>
 */
public final class Uuids {
    private final ConfigStore config;
    private String prefix = randomHex(13);
    private long counter = ThreadLocalRandom.current().nextInt(0xFFF);
    private long lastMicros;

    public Uuids(ConfigStore config) {
        this.config = config;
    }

    public String next() {
        return switch (config.get("uuids", "algorithm").map(String::strip).orElse("random")) {
            case "sequential" -> sequential();
            case "utc_random" -> utcMicros() + randomHex(9);
            case "utc_id" -> utcMicros() + config.get("uuids", "utc_id_suffix").map(String::strip).orElse("");
            default -> randomHex(16);
        };
    }

    private synchronized String sequential() {
        counter += 1 + ThreadLocalRandom.current().nextInt(0xFFD);
        if (counter >= 0xFFF000) {
            prefix = randomHex(13);
            counter = ThreadLocalRandom.current().nextInt(0xFFF);
        }
        return prefix + String.format("%06x", counter);
    }

    /** Microseconds since the epoch as 14 hex digits, never the same twice here, so ids made in a row still sort. */
    private synchronized String utcMicros() {
        java.time.Instant now = java.time.Instant.now();
        long micros = Math.max(now.getEpochSecond() * 1_000_000 + now.getNano() / 1000, lastMicros + 1);
        lastMicros = micros;
        return String.format("%014x", micros);
    }

    private static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
