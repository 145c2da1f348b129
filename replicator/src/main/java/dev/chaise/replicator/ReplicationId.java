package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.ErlangTerm;
import dev.chaise.storage.ErlangTerm.Atom;
import dev.chaise.storage.ErlangTerm.Str;
import dev.chaise.storage.ErlangTerm.Tuple;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The replication id, as CouchDB 3 computes it ({@code couch_replicator_ids}, version 4): the md5
 * of {@code term_to_binary([ServerUuid, Source, Target | Filter ++ WinningRevsOnly ++ SinceSeq])},
 * in hex, plus {@code +continuous} and {@code +create_target}. A replication restarted after a
 * crash, a restart or on another server of the same deployment therefore finds its checkpoints,
 * and so does one CouchDB ran with the same uuid.
 */
public final class ReplicationId {
    /** What Chaise's replicator sends as User-Agent; like CouchDB's default, it is not part of the id. */
    static final String USER_AGENT = "CouchDB-Replicator/3.5.0 (Chaise)";
    /** {@code re:replace(Code, "^\s*(.*?)\s*$", "\\1")}: PCRE's '.' stops at '\n' only. */
    private static final Pattern TRIM = Pattern.compile("^\\s*(.*?)\\s*$", Pattern.UNIX_LINES);

    private ReplicationId() {}

    /** {@code {remote, User, Host, NonDefaultPort, Path, Headers, OAuth}} of a normalized URL. */
    static Object v4Endpoint(String user, String url, List<Endpoint.Header> headers) {
        Object host;
        Object port;
        Object path;
        try {
            URI u = new URI(url);
            String h = u.getHost();
            if (h.startsWith("[") && h.endsWith("]")) h = h.substring(1, h.length() - 1);
            host = new Str(h);
            int p = u.getPort();
            boolean https = u.getScheme().equalsIgnoreCase("https");
            if (p < 0 || (https && p == 443) || (!https && (p == 80 || p == 5984))) port = new Atom("default");
            else port = p;
            String raw = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
            if (u.getRawQuery() != null) raw += "?" + u.getRawQuery();
            path = new Str(raw);
        } catch (Exception e) {
            host = new Str(url); // CouchDB tolerates what ibrowse cannot parse
            port = ErlangTerm.UNDEFINED;
            path = ErlangTerm.UNDEFINED;
        }
        List<Object> hs = new ArrayList<>(headers.size());
        for (Endpoint.Header h : headers) hs.add(Tuple.of(new Str(h.name()), new Str(h.value())));
        return Tuple.of(new Atom("remote"), user == null ? ErlangTerm.UNDEFINED : new Str(user), host, port, path, hs, ErlangTerm.UNDEFINED);
    }

    /**
     * The base id and extension of a replication whose user filter's code (if it has one) is
     * {@code filterCode}.
     */
    static String[] compute(String serverUuid, ReplicationSpec r, String filterCode) {
        List<Object> base = new ArrayList<>();
        base.add(serverUuid.getBytes(StandardCharsets.UTF_8));
        base.add(r.source().idTerm());
        base.add(r.target().idTerm());
        if (r.filter() != null && r.filter().startsWith("_")) {
            base.add(r.filter().getBytes(StandardCharsets.UTF_8));
            base.add(ErlangTerm.ejson(r.queryParams()));
        } else if (r.filter() != null) {
            base.add(trimCode(filterCode).getBytes(StandardCharsets.UTF_8));
            base.add(ErlangTerm.ejson(r.queryParams()));
        } else if (r.docIds() != null) {
            List<Object> ids = new ArrayList<>();
            for (String id : r.docIds()) ids.add(id.getBytes(StandardCharsets.UTF_8));
            base.add(ids);
        } else if (r.selector() != null) {
            base.add(ErlangTerm.ejson(ejsort(r.normalizedSelector())));
        }
        if (r.winningRevsOnly()) base.add("winning_revs_only".getBytes(StandardCharsets.UTF_8));
        if (r.sinceSeq() != null) base.add(ErlangTerm.ejson(r.sinceSeq()));
        String ext = (r.continuous() ? "+continuous" : "") + (r.createTarget() ? "+create_target" : "");
        return new String[] {md5Hex(ErlangTerm.encode(base)), ext};
    }

    static String trimCode(String code) {
        var m = TRIM.matcher(code);
        return m.find() ? m.replaceFirst("$1") : code;
    }

    /** couch_replicator_filters:ejsort: object members sorted by name, recursively. */
    static JsonNode ejsort(JsonNode j) {
        if (j.isObject()) {
            TreeMap<String, JsonNode> sorted = new TreeMap<>(Endpoint::compareBytes);
            for (Map.Entry<String, JsonNode> e : j.properties()) sorted.put(e.getKey(), ejsort(e.getValue()));
            ObjectNode o = dev.chaise.storage.json.Json.NODES.objectNode();
            sorted.forEach(o::set);
            return o;
        }
        if (j.isArray()) {
            var a = dev.chaise.storage.json.Json.NODES.arrayNode();
            for (JsonNode e : j) a.add(ejsort(e));
            return a;
        }
        return j;
    }

    static String md5Hex(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
