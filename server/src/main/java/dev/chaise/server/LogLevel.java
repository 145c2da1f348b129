package dev.chaise.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/** CouchDB's {@code [log] level} names on Logback's root logger, applied at start and on each change. */
final class LogLevel {
    private LogLevel() {}

    /** CouchDB's level name as Logback's; notice is info (access lines are logged at info), the severe ones are error. */
    static Level of(String couch) {
        return switch (couch.strip().toLowerCase(Locale.ROOT)) {
            case "debug" -> Level.DEBUG;
            case "info", "notice" -> Level.INFO;
            case "warning", "warn" -> Level.WARN;
            case "error", "critical", "alert", "emergency" -> Level.ERROR;
            case "none" -> Level.OFF;
            default -> null;
        };
    }

    static void apply(String couch) {
        Level level = of(couch);
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (level == null) {
            root.warn("[log] level {} is not one of debug, info, notice, warning, error, critical, alert, emergency, none; keeping {}",
                    couch, root.getLevel());
            return;
        }
        root.setLevel(level);
    }
}
