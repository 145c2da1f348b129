package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.chaise.stats.Counter;
import dev.chaise.stats.Stats;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** couch_log.level.*: what is logged is counted by level; what the level filters out is not. */
class LogCountsTest {
    @Test
    void countsWhatIsLoggedByCouchDbsLevel() {
        Stats stats = new Stats();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger access = (Logger) LoggerFactory.getLogger(LogCounts.ACCESS_LOGGER);
        Logger some = (Logger) LoggerFactory.getLogger("dev.chaise.test.logcounts");
        Level rootWas = root.getLevel();
        Level accessWas = access.getLevel();
        LogCounts.attach(stats);
        try {
            root.setLevel(Level.INFO);
            access.setLevel(Level.INFO);
            some.error("e");
            some.warn("w1");
            some.warn("w2");
            some.info("i");
            some.debug("not logged at info, so not counted");
            access.info("GET /db 200"); // an access line: CouchDB's notice
            root.setLevel(Level.DEBUG);
            some.debug("d");
            assertEquals(1, value(stats, "error"));
            assertEquals(2, value(stats, "warning"));
            assertEquals(1, value(stats, "info"));
            assertEquals(1, value(stats, "notice"));
            assertEquals(1, value(stats, "debug"));
            assertEquals("level", stats.get("couch_log.level.error").label());
        } finally {
            root.detachAppender(LogCounts.NAME);
            access.detachAppender(LogCounts.NAME);
            root.setLevel(rootWas);
            access.setLevel(accessWas);
        }
    }

    private static long value(Stats stats, String level) {
        return ((Counter) stats.get("couch_log.level." + level)).value();
    }
}
