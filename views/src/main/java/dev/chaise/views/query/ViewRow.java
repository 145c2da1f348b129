package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A row of a view result: a map row ({@code id} set) or a reduced group ({@code id} null).
 *
 * @param doc with {@code include_docs}: the document, or a JSON null when it is missing or deleted
 */
public record ViewRow(JsonNode key, String id, JsonNode value, JsonNode doc) {}
