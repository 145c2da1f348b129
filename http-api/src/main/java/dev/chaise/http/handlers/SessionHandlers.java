package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.auth.Authenticator;
import dev.chaise.http.auth.Credentials;
import dev.chaise.storage.UserCtx;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@code /_session}: cookie login, who-am-I, logout. */
public final class SessionHandlers {
    private final Authenticator auth;

    public SessionHandlers(Authenticator auth) {
        this.auth = auth;
    }

    public void register(Router r) {
        r.add("GET", "/_session", this::get);
        r.add("POST", "/_session", this::login);
        r.add("DELETE", "/_session", this::logout);
    }

    private Response get(Request req) {
        UserCtx u = req.user();
        if (u.isAnonymous() && "true".equals(req.query("basic"))) throw HttpError.unauthorized("Please login.");
        Map<String, Object> userCtx = new LinkedHashMap<>();
        userCtx.put("name", u.name());
        userCtx.put("roles", u.roles());
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("authentication_handlers", auth.handlerNames());
        if (u.handler() != null) info.put("authenticated", u.handler());
        auth.authenticationDb().ifPresent(db -> info.put("authentication_db", db));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("ok", true);
        body.put("userCtx", userCtx);
        body.put("info", info);
        return Response.json(200, body);
    }

    private Response login(Request req) {
        Map<String, String> form = form(req);
        String name = username(form);
        String password = form.getOrDefault("password", "");
        Optional<Credentials> c = auth.check(name, password, req.remoteAddress(), true);
        if (c.isEmpty()) {
            // ?fail= answers the same body with 302 and a Location, as redirectOr does for a success.
            String fail = req.query("fail");
            HttpError e = fail == null ? HttpError.unauthorized(Authenticator.INCORRECT)
                    : new HttpError(302, "unauthorized", Authenticator.INCORRECT).withHeader("Location", absolute(req, fail));
            throw e.withHeader("Set-Cookie", auth.logoutCookie(false));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("ok", true);
        body.put("name", c.get().name());
        body.put("roles", c.get().roles());
        return redirectOr(req, req.query("next"), Response.json(200, body)).withHeader("Set-Cookie", auth.loginCookie(c.get(), false));
    }

    private Response logout(Request req) {
        return redirectOr(req, req.query("next"), Response.ok()).withHeader("Set-Cookie", auth.logoutCookie(false));
    }

    /** {@code ?next=} / {@code ?fail=}: the same body with 302 and a Location, for HTML forms. */
    private static Response redirectOr(Request req, String path, Response.Full resp) {
        if (path == null) return resp;
        return new Response.Full(302, resp.headers(), resp.body()).withHeader("Location", absolute(req, path));
    }

    /** couch_httpd:absolute_uri: the redirect is a path on this server, made absolute; anything else is refused. */
    private static String absolute(Request req, String path) {
        if (!path.startsWith("/")) throw HttpError.badRequest("path must begin with a /.");
        return req.absoluteUri(path);
    }

    private static Map<String, String> form(Request req) {
        String ct = req.contentType();
        Map<String, String> out = new LinkedHashMap<>();
        if ("application/x-www-form-urlencoded".equals(ct)) {
            String text = new String(Bodies.bytes(req, Integer.MAX_VALUE), StandardCharsets.UTF_8);
            Map<String, List<String>> p;
            try {
                p = new QueryStringDecoder(text, StandardCharsets.UTF_8, false).parameters();
            } catch (IllegalArgumentException e) {
                throw HttpError.badRequest("invalid_url_encoding");
            }
            p.forEach((k, v) -> {
                if (!v.isEmpty()) out.put(k, v.get(0));
            });
        } else if ("application/json".equals(ct)) {
            ObjectNode o = Bodies.jsonObject(req);
            for (Map.Entry<String, JsonNode> e : o.properties()) {
                JsonNode v = e.getValue();
                if (!v.isTextual()) throw HttpError.badRequest("`" + e.getKey() + "` must be a string");
                out.put(e.getKey(), v.asText());
            }
        } else {
            throw HttpError.badContentType("Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'");
        }
        return out;
    }

    /** CouchDB accepts {@code name} or {@code username}, but not two different ones. */
    private static String username(Map<String, String> form) {
        String name = form.get("name");
        String username = form.get("username");
        if (name == null && username == null) throw HttpError.badRequest("request body must contain a username");
        if (name != null && username != null && !name.equals(username)) throw HttpError.badRequest("request body contains different usernames");
        return name != null ? name : username;
    }
}
