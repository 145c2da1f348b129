package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.views.collation.ViewCollation;

/**
 * The values one field can take, as Mango's planner narrows them ({@code mango_idx_view:range}):
 * a low bound ({@code $gt}, {@code $gte} or {@code $eq}) and a high one ({@code $lt},
 * {@code $lte} or {@code $eq}), compared by view collation, starting from below-everything and
 * above-everything. Index choice and {@code _explain} use it exactly as CouchDB does; the scan
 * itself is planned by {@link ScanPlanner}. Null stands for the empty range.
 *
 * @param low {@link #MIN} for no low bound
 * @param high {@link #MAX} for no high bound
 */
record ColumnRange(String lowOp, JsonNode low, String highOp, JsonNode high) {
    /** Below and above every JSON value; compared by identity. */
    static final JsonNode MIN = new TextNode("<MIN>");
    static final JsonNode MAX = new TextNode("<MAX>");

    static final ColumnRange ALL = new ColumnRange("$gt", MIN, "$lt", MAX);

    static int compare(JsonNode a, JsonNode b) {
        if (a == b) return 0;
        if (a == MIN || b == MAX) return -1;
        if (a == MAX || b == MIN) return 1;
        return ViewCollation.compare(a, b);
    }

    static boolean special(JsonNode v) {
        return v == MIN || v == MAX;
    }

    private enum Pos { MIN, LOW, MID, HIGH, MAX }

    private Pos pos(JsonNode arg) {
        int c = compare(arg, low);
        if (c < 0) return Pos.MIN;
        if (c == 0) return Pos.LOW;
        c = compare(arg, high);
        if (c < 0) return Pos.MID;
        return c == 0 ? Pos.HIGH : Pos.MAX;
    }

    /** This range and {@code op arg}; null if nothing is left. Operators other than comparisons leave it as it is. */
    ColumnRange narrow(String op, JsonNode arg) {
        return switch (op) {
            case "$beginsWith" -> {
                ColumnRange r = narrow("$gte", arg);
                // U+FFFF sorts after every other code point in the collation.
                yield r == null ? null : r.narrow("$lte", TextNode.valueOf(arg.textValue() + "\uFFFF"));
            }
            case "$lt" -> switch (pos(arg)) {
                case MIN, LOW -> null;
                case MID, HIGH -> new ColumnRange(lowOp, low, "$lt", arg);
                case MAX -> this;
            };
            case "$lte" -> switch (pos(arg)) {
                case MIN -> null;
                case LOW -> lowOp.equals("$gte") || lowOp.equals("$eq") ? point(arg) : null;
                case MID -> new ColumnRange(lowOp, low, "$lte", arg);
                case HIGH, MAX -> this;
            };
            case "$eq" -> switch (pos(arg)) {
                case MIN, MAX -> null;
                case LOW -> lowOp.equals("$gte") || lowOp.equals("$eq") ? point(arg) : null;
                case MID -> point(arg);
                case HIGH -> highOp.equals("$lte") || highOp.equals("$eq") ? point(arg) : null;
            };
            case "$gte" -> switch (pos(arg)) {
                case MIN, LOW -> this;
                case MID -> new ColumnRange("$gte", arg, highOp, high);
                case HIGH -> highOp.equals("$lte") || highOp.equals("$eq") ? point(arg) : null;
                case MAX -> null;
            };
            case "$gt" -> switch (pos(arg)) {
                case MIN -> this;
                case LOW, MID -> new ColumnRange("$gt", arg, highOp, high);
                case HIGH, MAX -> null;
            };
            default -> this;
        };
    }

    private static ColumnRange point(JsonNode v) {
        return new ColumnRange("$eq", v, "$eq", v);
    }

    boolean isPoint() {
        return lowOp.equals("$eq");
    }
}
