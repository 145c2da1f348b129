package dev.chaise.storage.json;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NumericNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.kv.TupleBytes;

/**
 * The one JSON parser/writer configuration for document bodies, so every layer reads numbers the
 * way CouchDB (jiffy) does:
 *
 * <ul>
 *   <li>a number without {@code .} or exponent is an integer of arbitrary precision: {@code IntNode},
 *       {@code LongNode} or {@code BigIntegerNode}, picked by magnitude (Jackson's default, and
 *       exactly what storage's {@code ExplodedJson.implode} rebuilds, so trees compare with {@code equals});
 *   <li>any other number is an IEEE double ({@code DoubleNode}): {@code 1.0} stays {@code 1.0},
 *       {@code 1e2} is {@code 100.0}, {@code -0.0} keeps its sign; a literal that overflows to
 *       infinity ({@code 1e400}) is rejected, as jiffy does;
 *   <li>a string with an unpaired surrogate escape ({@code "\ud800"}) is rejected, as jiffy does;
 *   <li>duplicate member names: the last one wins (Jackson's default, CouchDB's behaviour);
 *   <li>trailing content after the value is an error.
 * </ul>
 *
 * Rejections throw {@link InvalidJsonException} ("invalid UTF-8 JSON", CouchDB's reason); syntax
 * errors stay Jackson's {@code JsonProcessingException}. Output is compact. Treat
 * {@link #MAPPER} as read-only: reconfiguring it would change every layer at once.
 */
public final class Json {
    /** CouchDB's reason for any body jiffy refuses to decode. */
    public static final String INVALID_JSON = "invalid UTF-8 JSON";

    public static final JsonNodeFactory NODES = new StrictNodeFactory();

    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .nodeFactory(NODES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .disable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    private Json() {}

    /** The compact JSON text of {@code value}, a tree or what Jackson writes as one; a tree always writes, so failing is a bug. */
    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("JSON could not be written", e);
        }
    }

    /** True if {@code s} is well-formed UTF-16, i.e. encodable as UTF-8 without substitution. */
    private static boolean wellFormed(String s) {
        return TupleBytes.wellFormed(s);
    }

    /** Refuses, while parsing, the two values Jackson accepts but jiffy (and the tuple layer) do not. */
    private static final class StrictNodeFactory extends JsonNodeFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public NumericNode numberNode(double v) {
            if (!Double.isFinite(v)) throw new InvalidJsonException();
            return super.numberNode(v);
        }

        @Override
        public NumericNode numberNode(float v) {
            if (!Float.isFinite(v)) throw new InvalidJsonException();
            return super.numberNode(v);
        }

        @Override
        public TextNode textNode(String text) {
            if (text != null && !wellFormed(text)) throw new InvalidJsonException();
            return super.textNode(text);
        }
    }
}
