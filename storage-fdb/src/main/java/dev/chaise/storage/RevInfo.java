package dev.chaise.storage;


/** One {@code _revs_info} entry. */
record RevInfo(RevId rev, Status status) {

    public enum Status {
        AVAILABLE("available"),
        DELETED("deleted"),
        MISSING("missing");

        private final String json;

        Status(String json) {
            this.json = json;
        }

        /** The value CouchDB puts in {@code "status"}. */
        public String json() {
            return json;
        }
    }
}
