package dev.chaise.replicator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.jobs.JobQueue;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Two replicators over one KV store, as two servers on one FoundationDB cluster: a job runs on
 * exactly one of them, both show it in _scheduler/jobs, and when the one running it stops, the
 * other takes it over and goes on from the checkpoint.
 */
class SharedJobsTest {
    static final ReplicationSpec.RepUser ADMIN = new ReplicationSpec.RepUser("admin", List.of("_admin"));

    static ReplicatorModule replicator(Storage storage, KvStore kv, String node) {
        LocalAccess access = new LocalAccess(storage);
        ReplicatorConfig d = ReplicatorConfig.defaults("uuid", () -> "http://127.0.0.1:5984/");
        ReplicatorConfig c = new ReplicatorConfig(d.serverUuid(), node, d.loopbackBase(), d.maxJobs(), Duration.ofMillis(200), d.healthThreshold(),
                d.maxHistory(), Duration.ofSeconds(2), Duration.ofMillis(200), d.defaults(), false, Duration.ofSeconds(1));
        return new ReplicatorModule(storage, new ViewsModule(storage, null).filters(), new JobQueue(kv), access, c, name -> false).start();
    }

    static void write(Storage storage, String db, String id) {
        storage.open(db).updateUnchecked(List.of(DocUpdate.edit(id, null, false, Json.NODES.objectNode().put("v", id))), true);
    }

    static void waitFor(BooleanSupplier ok, String what) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        while (!ok.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) throw new AssertionError(what + " within 20 s");
            Thread.sleep(50);
        }
    }

    @Test
    void oneJobRunsOnOneServerAndMovesWhenItStops() throws Exception {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            Storage storage = new Storage(kv, "{}");
            storage.create("src");
            for (int i = 0; i < 20; i++) write(storage, "src", "d" + i);
            ReplicatorModule one = replicator(storage, kv, "one@test");
            ReplicatorModule two = replicator(storage, kv, "two@test");
            try {
                ReplicateRequests.Answer a = one.requests().replicate(Json.MAPPER.readTree("{\"source\":\"src\",\"target\":\"dst\",\"create_target\":true,\"continuous\":true,\"checkpoint_interval\":200}"),
                        ADMIN, null, null);
                assertEquals(202, a.status());
                String id = a.body().get("_local_id").asText();
                waitFor(() -> storage.exists("dst") && storage.open("dst").info().docCount() == 20, "20 documents copied");
                waitFor(() -> one.tasks().list().size() + two.tasks().list().size() == 1, "one task");
                assertEquals(1, one.tasks().list().size() + two.tasks().list().size(), "the job runs on exactly one server");
                ReplicatorModule running = one.tasks().list().isEmpty() ? two : one;
                ReplicatorModule other = running == one ? two : one;
                String otherNode = running == one ? "two@test" : "one@test";
                // both servers show the job, from its data in the queue
                JsonNode seen = other.pages().jobs(0, 10).get("jobs").get(0);
                assertEquals(id, seen.get("id").asText());
                assertEquals(running == one ? "one@test" : "two@test", seen.get("node").asText());

                running.close(); // its job goes back to the queue after a last checkpoint
                waitFor(() -> other.tasks().list().size() == 1, "taken over by the other server");
                write(storage, "src", "after");
                waitFor(() -> storage.open("dst").info().docCount() == 21, "a new write copied by the other server");
                JsonNode now = other.pages().job(id);
                assertEquals(otherNode, now.get("node").asText(), now.toString());
                long started = 0;
                for (JsonNode e : now.get("history")) if (e.get("type").asText().equals("started")) started++;
                assertTrue(started >= 2, "started once on each server: " + now.get("history"));
            } finally {
                one.close();
                two.close();
                storage.close();
            }
        }
    }
}
