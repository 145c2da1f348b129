package dev.chaise.views.collation;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * How a view orders its keys: CouchDB's view collation (ICU strings, {@link ViewKeyCodec}), or,
 * for a view whose {@code options.collation} is {@code "raw"}, Erlang's term order
 * ({@link RawKeyCodec}). The index stores the encoding's bytes, so queries on the view must encode
 * their keys, and compare them, the same way.
 */
public enum Collation {
    DEFAULT {
        @Override
        public byte[] encode(JsonNode key) {
            return ViewKeyCodec.encode(key);
        }

        @Override
        public int compare(JsonNode a, JsonNode b) {
            return ViewCollation.compare(a, b);
        }
    },
    RAW {
        @Override
        public byte[] encode(JsonNode key) {
            return RawKeyCodec.encode(key);
        }

        @Override
        public int compare(JsonNode a, JsonNode b) {
            return RawOrder.compare(a, b);
        }
    };

    /** The order-preserving bytes of {@code key}; no size check. */
    public abstract byte[] encode(JsonNode key);

    public abstract int compare(JsonNode a, JsonNode b);

    /** {@link #encode}, failing as {@link ViewKeyCodec#encodeChecked} does for a key over the limits. */
    public byte[] encodeChecked(JsonNode key) {
        ViewKeyCodec.checkKeySize(key);
        byte[] encoded = encode(key);
        if (encoded.length > ViewKeyCodec.ENCODED_SIZE_LIMIT) {
            throw new ViewKeyTooLargeException(encoded.length, ViewKeyCodec.ENCODED_SIZE_LIMIT, true);
        }
        return encoded;
    }

    /** A view's collation from its {@code options} (couch_mrview_util's maybe_define_less_fun). */
    public static Collation of(JsonNode viewOptions) {
        return viewOptions != null && "raw".equals(viewOptions.path("collation").textValue()) ? RAW : DEFAULT;
    }
}
