package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.text.Collator;
import java.util.Comparator;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * CouchDB's view collation of JSON values: {@code null < false < true < numbers < strings <
 * arrays < objects}; numbers by value ({@code 1 == 1.0}); arrays and objects element by element,
 * then by length. Strings use the JDK's root-locale {@link Collator} at tertiary strength, which
 * stands in for ICU's UCA until the ICU collation is wired in; the two agree on ordinary text.
 */
public final class BasicCollation implements Comparator<JsonNode> {
    public static final BasicCollation INSTANCE = new BasicCollation();

    // RuleBasedCollator.compare is synchronized; one per thread avoids contention.
    private static final ThreadLocal<Collator> COLLATOR = ThreadLocal.withInitial(() -> {
        Collator c = Collator.getInstance(Locale.ROOT);
        c.setStrength(Collator.TERTIARY);
        c.setDecomposition(Collator.CANONICAL_DECOMPOSITION);
        return c;
    });

    private BasicCollation() {}

    @Override
    public int compare(JsonNode a, JsonNode b) {
        int ra = rank(a);
        int rb = rank(b);
        if (ra != rb) return Integer.compare(ra, rb);
        return switch (ra) {
            case 3 -> number(a).compareTo(number(b));
            case 4 -> {
                if (a.textValue().equals(b.textValue())) yield 0;
                yield Integer.signum(COLLATOR.get().compare(a.textValue(), b.textValue()));
            }
            case 5 -> arrays(a, b);
            case 6 -> objects(a, b);
            default -> 0;
        };
    }

    private static int rank(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) return 0;
        if (n.isBoolean()) return n.booleanValue() ? 2 : 1;
        if (n.isNumber()) return 3;
        if (n.isTextual()) return 4;
        if (n.isArray()) return 5;
        return 6;
    }

    private static BigDecimal number(JsonNode n) {
        return n.isIntegralNumber() ? new BigDecimal(n.bigIntegerValue()) : n.decimalValue();
    }

    private int arrays(JsonNode a, JsonNode b) {
        int n = Math.min(a.size(), b.size());
        for (int i = 0; i < n; i++) {
            int c = compare(a.get(i), b.get(i));
            if (c != 0) return c;
        }
        return Integer.compare(a.size(), b.size());
    }

    private int objects(JsonNode a, JsonNode b) {
        Iterator<Map.Entry<String, JsonNode>> ia = a.properties().iterator();
        Iterator<Map.Entry<String, JsonNode>> ib = b.properties().iterator();
        while (ia.hasNext() && ib.hasNext()) {
            Map.Entry<String, JsonNode> ea = ia.next();
            Map.Entry<String, JsonNode> eb = ib.next();
            int c = compare(TextNode.valueOf(ea.getKey()), TextNode.valueOf(eb.getKey()));
            if (c != 0) return c;
            c = compare(ea.getValue(), eb.getValue());
            if (c != 0) return c;
        }
        return Boolean.compare(ia.hasNext(), ib.hasNext());
    }
}
