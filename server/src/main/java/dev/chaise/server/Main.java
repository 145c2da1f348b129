package dev.chaise.server;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.fdb.FdbKvStore;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code java -jar chaise.jar [--config FILE]}: opens the configured storage and serves until stopped. */
public final class Main {
    private static final Logger log = LoggerFactory.getLogger(Main.class);

    private Main() {}

    public static void main(String[] args) throws Exception {
        IniConfig config = new IniConfig();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--config" -> {
                    if (i + 1 >= args.length) usage("--config needs a file");
                    config = IniConfig.load(Path.of(args[++i]));
                }
                case "-h", "--help" -> usage(null);
                default -> usage("unknown argument " + args[i]);
            }
        }
        KvStore store = openStorage(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("stopping");
            store.close();
            stopped.countDown();
        }, "chaise-shutdown"));
        log.info("storage ready: backend={}", store.backendName());
        stopped.await();
    }

    static KvStore openStorage(IniConfig config) {
        String backend = config.get("chaise", "storage", "embedded");
        return switch (backend) {
            case "embedded" -> EmbeddedKvStore.open(EmbeddedOptions.onDisk(Path.of(config.get("chaise", "data_dir", "./data"))));
            case "embedded-memory" -> EmbeddedKvStore.open(EmbeddedOptions.inMemory());
            case "fdb" -> FdbKvStore.open(config.get("chaise", "fdb_cluster_file").orElse(null));
            default -> throw new IllegalArgumentException("[chaise] storage must be embedded, embedded-memory or fdb, not " + backend);
        };
    }

    private static void usage(String error) {
        if (error != null) System.err.println("chaise: " + error);
        System.err.println("usage: java -jar chaise.jar [--config FILE]");
        System.exit(error == null ? 0 : 2);
    }
}
