package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A replication's source or target: a database of this server, reached through storage, or a
 * remote one reached over HTTP. Each carries the Erlang term CouchDB 3 hashes into the
 * replication id ({@code couch_replicator_ids:get_v4_endpoint}).
 */
sealed interface Endpoint permits Endpoint.Local, Endpoint.Remote {

    /** The term of CouchDB 3's v4 replication id. */
    Object idTerm();

    /** As {@code _scheduler} and {@code _active_tasks} show it: no credentials. */
    String display();

    /** One header as CouchDB keeps it: name and value as given. */
    record Header(String name, String value) {}

    /**
     * A database of this server.
     *
     * @param idTerm the endpoint CouchDB 3's {@code _replicate} would have made of the name (a
     *     loopback URL with the request's {@code Authorization} and {@code Cookie}), so the id is
     *     CouchDB's on the same address, port and uuid
     */
    record Local(String db, Object idTerm) implements Endpoint {
        @Override
        public String display() {
            return db;
        }
    }

    /**
     * A database behind a URL.
     *
     * @param url without credentials, with CouchDB's trailing slash
     * @param user Basic credentials (null for none), as CouchDB picks them: {@code auth.basic},
     *     then the URL's userinfo, then an {@code Authorization: Basic} header
     * @param headers the other headers to send, in CouchDB's order
     */
    record Remote(String url, String user, String password, List<Header> headers, Object idTerm) implements Endpoint {
        @Override
        public String display() {
            return url;
        }

        @Override
        public String toString() {
            return "Remote[" + url + "]"; // never the password
        }
    }

    String ACCEPT = "Accept";
    String USER_AGENT = "User-Agent";
    String JSON = "application/json";

    /** The error CouchDB gives any URL it cannot use: 400 invalid_replication. */
    static ReplicationException invalidUrl() {
        return new ReplicationException(400, "invalid_replication", "endpoint has an invalid url");
    }

    static boolean isUrl(String s) {
        return s.startsWith("http://") || s.startsWith("https://");
    }

    /**
     * {@code {"url", "auth", "headers"}} or a URL string, as {@code couch_replicator_parse:parse_rep_db}
     * reads it, with {@code normalize_basic_auth}.
     */
    static Remote remote(String url0, JsonNode auth, JsonNode headersJson) {
        URI parsed = checkUrl(url0);
        String url = url0.contains("?") || url0.endsWith("/") ? url0 : url0 + "/";
        // Headers as given, sorted by name (first one wins), then CouchDB's defaults merged in.
        List<Header> given = new ArrayList<>();
        if (headersJson != null && !headersJson.isNull()) {
            if (!headersJson.isObject()) throw ReplicationException.badRequest("`headers` must be a JSON object");
            for (Map.Entry<String, JsonNode> e : headersJson.properties()) {
                if (!e.getValue().isTextual()) throw ReplicationException.badRequest("header " + e.getKey() + " value must be a string.");
                given.add(new Header(e.getKey(), e.getValue().textValue()));
            }
        }
        List<Header> headers = ukeysort(given);
        boolean userAccept = headers.stream().anyMatch(h -> h.name().equals(ACCEPT));
        boolean userAgent = headers.stream().anyMatch(h -> h.name().equals(USER_AGENT));
        List<Header> merged = new ArrayList<>(headers);
        if (!userAccept) merged.add(new Header(ACCEPT, JSON));
        if (!userAgent) merged.add(new Header(USER_AGENT, ReplicationId.USER_AGENT));
        merged.sort(Comparator.comparing(Header::name, Endpoint::compareBytes));

        // normalize_basic_auth: credentials from auth.basic, else the URL, else an Authorization header.
        String[] headerCreds = null;
        Header authHeader = find(merged, "authorization");
        if (authHeader != null) {
            String v = authHeader.value();
            int sp = v.indexOf(' ');
            String scheme = sp < 0 ? v : v.substring(0, sp);
            if (scheme.toLowerCase(Locale.ROOT).equals("basic") && sp >= 0) {
                headerCreds = decodeBasic(v.substring(sp + 1));
                merged.remove(authHeader);
            }
            merged = mochiwebOrder(merged); // mochiweb_headers:to_list: by lower-cased name
        }
        String[] urlCreds = null;
        String rawUserInfo = parsed.getRawUserInfo();
        if (rawUserInfo != null) {
            int colon = rawUserInfo.indexOf(':');
            urlCreds = colon < 0 ? null : new String[] {rawUserInfo.substring(0, colon), rawUserInfo.substring(colon + 1)};
            url = withoutUserInfo(url, rawUserInfo);
        }
        String[] authCreds = null;
        JsonNode basic = auth == null ? null : auth.path("basic");
        if (auth != null && !auth.isNull() && !auth.isObject()) throw ReplicationException.badRequest("`auth` must be a JSON object");
        if (basic != null && basic.path("username").isTextual() && basic.path("password").isTextual()) {
            authCreds = new String[] {basic.get("username").textValue(), basic.get("password").textValue()};
        }
        String[] creds = authCreds != null ? authCreds : urlCreds != null ? urlCreds : headerCreds;

        List<Header> send = new ArrayList<>();
        List<Header> forId = new ArrayList<>();
        for (Header h : merged) {
            boolean isDefault = (h.name().equals(ACCEPT) && h.value().equals(JSON)) || (h.name().equals(USER_AGENT) && h.value().equals(ReplicationId.USER_AGENT));
            if (!isDefault) forId.add(h);
            send.add(h);
        }
        Object idTerm = ReplicationId.v4Endpoint(creds == null ? null : creds[0], url, forId);
        return new Remote(url, creds == null ? null : creds[0], creds == null ? null : creds[1], List.copyOf(send), idTerm);
    }

    /** A local database named as CouchDB 3's {@code _replicate} would turn it into a loopback URL. */
    static Local local(String db, String loopbackBase, String authorization, String cookie) {
        String url = loopbackBase + quote(db);
        JsonNode headers = null;
        if (authorization != null || cookie != null) {
            headers = dev.chaise.storage.json.Json.NODES.objectNode()
                    .put("authorization", authorization == null ? "" : authorization)
                    .put("cookie", cookie == null ? "" : cookie);
        }
        return new Local(db, remote(url, null, headers).idTerm());
    }

    /** {@code couch_util:url_encode} of a database name, as chttpd's hack quotes it ('/' too). */
    static String quote(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '~' || c == '_') {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }

    private static URI checkUrl(String url) {
        if (url == null || !isUrl(url)) throw invalidUrl();
        try {
            URI u = new URI(url);
            if (u.getHost() == null || u.getHost().isEmpty()) throw invalidUrl();
            return u;
        } catch (URISyntaxException e) {
            throw invalidUrl();
        }
    }

    private static String withoutUserInfo(String url, String rawUserInfo) {
        int scheme = url.indexOf("://") + 3;
        String rest = url.substring(scheme);
        if (rest.startsWith(rawUserInfo + "@")) return url.substring(0, scheme) + rest.substring(rawUserInfo.length() + 1);
        return url;
    }

    private static String[] decodeBasic(String b64) {
        try {
            String s = new String(Base64.getDecoder().decode(b64.strip()), StandardCharsets.ISO_8859_1);
            int colon = s.indexOf(':');
            return colon < 0 ? null : new String[] {s.substring(0, colon), s.substring(colon + 1)};
        } catch (IllegalArgumentException e) {
            return null; // CouchDB tolerates a bad value here
        }
    }

    private static Header find(List<Header> headers, String lowerName) {
        for (Header h : headers) if (h.name().toLowerCase(Locale.ROOT).equals(lowerName)) return h;
        return null;
    }

    /** lists:ukeysort/2 on names: byte order, the first of equal names kept. */
    private static List<Header> ukeysort(List<Header> in) {
        TreeMap<String, Header> m = new TreeMap<>(Endpoint::compareBytes);
        for (Header h : in) m.putIfAbsent(h.name(), h);
        return new ArrayList<>(m.values());
    }

    /** mochiweb_headers:to_list: ordered by the lower-cased name (the first spelling kept). */
    private static List<Header> mochiwebOrder(List<Header> in) {
        TreeMap<String, Header> m = new TreeMap<>(Endpoint::compareBytes);
        for (Header h : in) m.putIfAbsent(h.name().toLowerCase(Locale.ROOT), h);
        return new ArrayList<>(m.values());
    }

    static int compareBytes(String a, String b) {
        return java.util.Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}
