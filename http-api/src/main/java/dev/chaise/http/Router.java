package dev.chaise.http;

import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.DocumentJson;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Routes by path segments. A pattern is {@code /}-separated: literal segments, {@code {name}}
 * placeholders matching any one segment, and a last {@code {name...}} matching one or more
 * remaining segments (joined with {@code /}). Literals win over placeholders, so {@code /_uuids}
 * is never taken for a database. A path that matches with another method is 405 with {@code Allow};
 * HEAD is served by the GET handler, as CouchDB does.
 */
public final class Router {
    @FunctionalInterface
    public interface Handler {
        Response handle(Request req) throws Exception;
    }

    /**
     * A handler whose work, for the requests {@link #bounded} says, is bounded and never waits for
     * another thread (a document read of a store whose reads never wait, {@code KvStore#readsNeverWait}):
     * such a request may be answered on the connection's event loop instead of a virtual thread
     * of its own. Register one only where that holds; anything it does that could wait must check
     * {@code NoWaiting}.
     */
    public interface Bounded extends Handler {
        /** Whether {@code req} (routed here, not yet authenticated) is one of the bounded ones. */
        boolean bounded(Request req);
    }

    /** {@code handler} as {@link Bounded} for the requests {@code when} accepts. */
    public static Bounded bounded(Handler handler, java.util.function.Predicate<Request> when) {
        return new Bounded() {
            @Override
            public Response handle(Request req) throws Exception {
                return handler.handle(req);
            }

            @Override
            public boolean bounded(Request req) {
                return when.test(req);
            }
        };
    }

    public record Match(Handler handler, Map<String, String> params) {}

    private static final class Node {
        final Map<String, Node> literals = new HashMap<>();
        Node param;
        String paramName;
        Node rest;
        String restName;
        final Map<String, Handler> handlers = new LinkedHashMap<>();
    }

    private final Node root = new Node();
    private final Map<String, Route> routes = new LinkedHashMap<>();

    /** A registered method and pattern, as given to {@link #add}. */
    public record Route(String method, String pattern) {}

    /** Registers {@code handler} for {@code method} on {@code pattern}; a later registration of the same pair replaces it. */
    public Router add(String method, String pattern, Handler handler) {
        Node n = root;
        String[] parts = pattern.split("/");
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (p.isEmpty()) continue;
            if (p.startsWith("{") && p.endsWith("...}")) {
                if (i != parts.length - 1) throw new IllegalArgumentException("{name...} must be last: " + pattern);
                if (n.rest == null) n.rest = new Node();
                n.restName = p.substring(1, p.length() - 4);
                n = n.rest;
            } else if (p.startsWith("{") && p.endsWith("}")) {
                String name = p.substring(1, p.length() - 1);
                if (n.param == null) {
                    n.param = new Node();
                    n.paramName = name;
                } else if (!n.paramName.equals(name)) {
                    throw new IllegalArgumentException("placeholder {" + name + "} clashes with {" + n.paramName + "}: " + pattern);
                }
                n = n.param;
            } else {
                n = n.literals.computeIfAbsent(p, k -> new Node());
            }
        }
        n.handlers.put(method, handler);
        routes.put(method + " " + pattern, new Route(method, pattern));
        return this;
    }

    /** Every method and pattern registered, in the order they were first added: what the server serves. */
    public List<Route> routes() {
        return List.copyOf(routes.values());
    }

    /**
     * The handler for a request, or an {@link HttpError}: 404 if no pattern matches the path,
     * 405 if one does but not for this method.
     */
    public Match match(String method, List<String> path) {
        Map<String, String> params = new HashMap<>();
        Node n = find(root, path, 0, params);
        if (n == null) throw HttpError.notFound("missing");
        Handler h = n.handlers.get(method);
        if (h == null && method.equals("HEAD")) h = n.handlers.get("GET");
        if (h == null) throw HttpError.methodNotAllowed(allow(n));
        for (Map.Entry<String, String> p : params.entrySet()) wellFormed(p.getKey(), p.getValue());
        return new Match(h, Map.copyOf(params));
    }

    /**
     * A placeholder's value from a URL whose bytes were not UTF-8 ({@link RequestTarget#decode}
     * leaves them as lone surrogates) is refused here, for every route alike, with the error of
     * what it names: no handler, and no key of storage, ever sees one.
     */
    private static void wellFormed(String name, String value) {
        if (DocumentJson.isUtf8(value)) return;
        switch (name) {
            case "docid", "ddoc", "ldoc" -> throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must be valid UTF-8");
            case "db" -> Storage.validateDatabaseName(value); // no legal name is other than ASCII: throws
            case "att" -> throw StorageException.badRequest("Attachment name is not UTF-8 encoded");
            default -> throw HttpError.badRequest("invalid_url_encoding");
        }
    }

    private static Node find(Node n, List<String> path, int i, Map<String, String> params) {
        if (i == path.size()) return n.handlers.isEmpty() ? null : n;
        String seg = path.get(i);
        Node lit = n.literals.get(seg);
        if (lit != null) {
            Node r = find(lit, path, i + 1, params);
            if (r != null) return r;
        }
        if (n.param != null) {
            params.put(n.paramName, seg);
            Node r = find(n.param, path, i + 1, params);
            if (r != null) return r;
            params.remove(n.paramName);
        }
        if (n.rest != null && !n.rest.handlers.isEmpty()) {
            params.put(n.restName, String.join("/", path.subList(i, path.size())));
            return n.rest;
        }
        return null;
    }

    private static String allow(Node n) {
        TreeSet<String> methods = new TreeSet<>(n.handlers.keySet());
        if (methods.contains("GET")) methods.add("HEAD");
        return String.join(",", new ArrayList<>(methods));
    }
}
