package dev.chaise.views.js;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** What one map function did with one document. */
public sealed interface MapOutcome {

    /** The rows it emitted, in emit order; {@code value} is a JSON null when emit had none. */
    record Rows(List<Emit> rows) implements MapOutcome {}

    /** It threw, timed out or emitted something that is not JSON; the doc is skipped for that view. */
    record Failed(String error, String reason) implements MapOutcome {}

    record Emit(JsonNode key, JsonNode value) {}
}
