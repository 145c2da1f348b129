package dev.chaise.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.chaise.stats.Counter;
import dev.chaise.stats.Stats;
import org.slf4j.LoggerFactory;

/**
 * CouchDB's {@code couch_log.level.*}: messages logged, by level, counted as they are written (a
 * message below {@code [log] level} is not logged, so not counted, as in couch_log). Logback's
 * levels are CouchDB's debug (and trace), info, warning and error; the access lines, which CouchDB
 * writes at notice, are notice.
 */
final class LogCounts extends AppenderBase<ILoggingEvent> {
    static final String ACCESS_LOGGER = "dev.chaise.http.access";
    static final String NAME = "couch_log-counts";

    private final Counter debug;
    private final Counter info;
    private final Counter notice;
    private final Counter warning;
    private final Counter error;

    private LogCounts(Stats s) {
        debug = counter(s, "debug");
        info = counter(s, "info");
        notice = counter(s, "notice");
        warning = counter(s, "warning");
        error = counter(s, "error");
        setName(NAME);
    }

    private static Counter counter(Stats s, String level) {
        return s.counter("couch_log.level." + level, "level", "number of " + level + " messages logged");
    }

    /** Counts what the root logger and the access logger write from now on. */
    static LogCounts attach(Stats stats) {
        LogCounts counts = new LogCounts(stats);
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        counts.setContext(root.getLoggerContext());
        counts.start();
        root.addAppender(counts);
        ((Logger) LoggerFactory.getLogger(ACCESS_LOGGER)).addAppender(counts); // not additive: its lines do not reach the root
        return counts;
    }

    @Override
    protected void append(ILoggingEvent e) {
        int level = e.getLevel().toInt();
        if (level >= Level.ERROR_INT) error.increment();
        else if (level >= Level.WARN_INT) warning.increment();
        else if (level >= Level.INFO_INT) (ACCESS_LOGGER.equals(e.getLoggerName()) ? notice : info).increment();
        else debug.increment();
    }
}
