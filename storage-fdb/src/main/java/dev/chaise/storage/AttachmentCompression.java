package dev.chaise.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Which attachments are stored gzipped, and how hard: CouchDB's {@code [attachments]
 * compressible_types} (comma-separated media types, {@code *} a wildcard, parameters after
 * {@code ;} ignored, case-insensitive) and {@code compression_level} (1 to 9; anything else stores
 * every attachment as sent). An attachment sent already gzipped is stored as it came, whatever its type.
 */
public final class AttachmentCompression {
    public static final String DEFAULT_TYPES = "text/*, application/javascript, application/json, application/xml";
    public static final int DEFAULT_LEVEL = 8;
    public static final AttachmentCompression DEFAULT = new AttachmentCompression(DEFAULT_TYPES, DEFAULT_LEVEL);

    private final List<Pattern> types;
    private final int level;

    public AttachmentCompression(String types, int level) {
        this.level = level;
        this.types = new ArrayList<>();
        for (String t : types.split("\\s*,\\s*")) {
            String type = t.strip();
            if (type.isEmpty()) continue;
            StringBuilder re = new StringBuilder("\\s*");
            String[] literal = type.split("\\*", -1);
            for (int i = 0; i < literal.length; i++) {
                if (i > 0) re.append(".*");
                if (!literal[i].isEmpty()) re.append(Pattern.quote(literal[i]));
            }
            re.append("(?:\\s*;.*)?\\s*");
            this.types.add(Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL));
        }
    }

    /** The gzip level attachments of {@code contentType} are stored with, or 0 to store them as sent. */
    int levelFor(String contentType) {
        if (level < 1 || level > 9 || contentType == null) return 0;
        for (Pattern p : types) if (p.matcher(contentType).matches()) return level;
        return 0;
    }
}
