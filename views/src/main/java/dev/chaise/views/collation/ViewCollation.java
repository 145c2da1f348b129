package dev.chaise.views.collation;

import com.fasterxml.jackson.databind.JsonNode;
import com.ibm.icu.text.Collator;
import com.ibm.icu.util.ULocale;
import com.ibm.icu.util.VersionInfo;
import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Map;

/**
 * CouchDB 3.5's view collation, implemented directly from its rules (couch_ejson_compare): the
 * reference that {@link ViewKeyCodec}'s byte order is tested against, and usable on its own to
 * merge or check rows in memory.
 *
 * <ul>
 *   <li>Types: {@code null < false < true < numbers < strings < arrays < objects}.
 *   <li>Numbers by exact mathematical value, whatever the representation: {@code 1 == 1.0},
 *       {@code -0.0 == 0.0}, and integers of any size compare exactly against doubles (Erlang's
 *       number comparison, which CouchDB uses, is exact for mixed integers and floats).
 *   <li>Strings with ICU's root collator at its defaults (UCA, tertiary strength, normalization
 *       off), as CouchDB opens it ({@code ucol_open("")}). There is no codepoint tie-break: strings
 *       ICU calls equal (e.g. canonically equivalent, or differing only in ignorables) collate equal,
 *       and the view then orders such rows by document id.
 *   <li>Arrays element by element; a proper prefix sorts first.
 *   <li>Objects pair by pair in member order: the member name (ICU), then the value; a proper prefix
 *       sorts first. Member order matters, as in CouchDB.
 * </ul>
 */
public final class ViewCollation {

    /** Frozen, so one instance is safe to share between threads. */
    static final Collator COLLATOR = rootCollator();

    private ViewCollation() {}

    /**
     * The versions of what collates strings, as CouchDB's {@code _versions} names them: the ICU
     * library's, its collation algorithm's (UCA) and the root collator's.
     */
    public record Versions(String library, String algorithm, String collator) {}

    public static Versions versions() {
        return new Versions(couchVersion(VersionInfo.ICU_VERSION), couchVersion(COLLATOR.getUCAVersion()), couchVersion(COLLATOR.getVersion()));
    }

    /** couch_util:version_to_binary: the parts joined with dots, trailing zeros dropped ({@code 153.120}). */
    static String couchVersion(VersionInfo v) {
        int[] parts = {v.getMajor(), v.getMinor(), v.getMilli(), v.getMicro()};
        int n = parts.length;
        while (n > 0 && parts[n - 1] == 0) n--;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append(i == 0 ? "" : ".").append(parts[i]);
        return b.toString();
    }

    private static Collator rootCollator() {
        Collator c = Collator.getInstance(ULocale.ROOT);
        // Spelled out, though they are ICU's root defaults, so a change of default cannot move rows.
        c.setStrength(Collator.TERTIARY);
        c.setDecomposition(Collator.NO_DECOMPOSITION);
        return c.freeze();
    }

    /** The collation rank of a JSON type: the first thing compared. */
    static int rank(JsonNode n) {
        return switch (n.getNodeType()) {
            case NULL -> 0;
            case BOOLEAN -> n.booleanValue() ? 2 : 1;
            case NUMBER -> 3;
            case STRING -> 4;
            case ARRAY -> 5;
            case OBJECT -> 6;
            default -> throw new IllegalArgumentException("not a JSON value: " + n.getNodeType());
        };
    }

    /** Negative, zero or positive as {@code a} collates before, with or after {@code b}. */
    public static int compare(JsonNode a, JsonNode b) {
        int ra = rank(a), rb = rank(b);
        if (ra != rb) return Integer.compare(ra, rb);
        return switch (ra) {
            case 3 -> exactValue(a).compareTo(exactValue(b));
            case 4 -> COLLATOR.compare(a.textValue(), b.textValue());
            case 5 -> compareArrays(a, b);
            case 6 -> compareObjects(a, b);
            default -> 0;
        };
    }

    private static int compareArrays(JsonNode a, JsonNode b) {
        int n = Math.min(a.size(), b.size());
        for (int i = 0; i < n; i++) {
            int c = compare(a.get(i), b.get(i));
            if (c != 0) return c;
        }
        return Integer.compare(a.size(), b.size());
    }

    private static int compareObjects(JsonNode a, JsonNode b) {
        Iterator<Map.Entry<String, JsonNode>> ia = a.fields(), ib = b.fields();
        while (ia.hasNext() && ib.hasNext()) {
            Map.Entry<String, JsonNode> ea = ia.next(), eb = ib.next();
            int c = COLLATOR.compare(ea.getKey(), eb.getKey());
            if (c != 0) return c;
            c = compare(ea.getValue(), eb.getValue());
            if (c != 0) return c;
        }
        return Boolean.compare(ia.hasNext(), ib.hasNext());
    }

    /** The exact value of a JSON number; doubles convert without rounding, -0.0 becomes 0. */
    static BigDecimal exactValue(JsonNode n) {
        if (n.isIntegralNumber()) return new BigDecimal(n.bigIntegerValue());
        if (n.isBigDecimal()) return n.decimalValue();
        double d = n.doubleValue();
        if (!Double.isFinite(d)) throw new IllegalArgumentException("not a JSON number: " + d);
        return new BigDecimal(d);
    }
}
