package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** A {@code _local} document: revision {@code 0-N}, no tree, no changes row. */
public record LocalDoc(String id, long revNumber, ObjectNode body) {
    public String rev() {
        return "0-" + revNumber;
    }
}
