package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;

/**
 * Owns CouchDB's scheduler rules for a crashing job: how many crashes in a row its history
 * holds, and how long it waits before the next start.
 */
final class CrashBackoff {
    private CrashBackoff() {}

    /** Consecutive crashes in a job's history (newest first): crashes each within the health threshold of the event before. */
    static int consecutiveCrashes(JsonNode history, Duration healthThreshold) {
        int count = 0;
        for (int i = 0; i < history.size(); i++) {
            JsonNode e = history.get(i);
            String type = e.path("type").asText();
            if (type.equals("crashed")) {
                if (i + 1 >= history.size()) return count; // a crash with nothing before it does not count, as in CouchDB
                Instant crash = Instant.parse(e.path("timestamp").asText());
                Instant prev = Instant.parse(history.get(i + 1).path("timestamp").asText());
                if (Duration.between(prev, crash).compareTo(healthThreshold) > 0) return count;
                count++;
            } else if (type.equals("stopped") && i + 1 < history.size() && history.get(i + 1).path("type").asText().equals("started")) {
                return count;
            }
        }
        return count;
    }

    /** backoff_micros: base * 2^(crashes - 1), the exponent at most 10; none for no consecutive crash. */
    static Duration backoff(Duration base, int crashes) {
        if (crashes <= 0) return Duration.ZERO; // a crash after a healthy run is retried at once
        int exp = Math.min(crashes - 1, 10);
        return base.multipliedBy(1L << exp);
    }
}
