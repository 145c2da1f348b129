package dev.chaise.http.auth;

import dev.chaise.storage.StorageException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * {@code [chttpd_auth] password_regexp} (or {@code [couch_httpd_auth]}): the rules a new password
 * of the users database must match, as {@code couch_users_db:validate_password} reads them. The
 * value is an Erlang list whose elements are a regular expression string, or a tuple of one and
 * optionally a reason: {@code [{".{10,}"}, {"[A-Z]+", "Requirement 2."}, "[a-z]+"]}. A password
 * that one does not match (anywhere in it, as {@code re:run} searches) is 400 {@code bad_request}
 * "Password does not conform to requirements.", followed by the rule's reason if it has a
 * non-empty one. A value that is not such a list is the server's fault: 403 "Server cannot hash
 * passwords at this time.", as in CouchDB. Patterns are Java's, which agree with PCRE's for the
 * classes, quantifiers and anchors such rules use.
 */
final class PasswordRules {
    static final String NOT_CONFORMING = "Password does not conform to requirements.";
    static final String SERVER_ERROR = "Server cannot hash passwords at this time.";

    private record Rule(Pattern pattern, String message) {}

    private PasswordRules() {}

    /** Checks {@code password} against {@code spec}; an empty spec or {@code []} allows any. */
    static void check(String spec, String password) {
        if (spec == null || spec.isBlank() || spec.strip().equals("[]")) return;
        for (Rule r : parse(spec)) {
            if (!r.pattern().matcher(password).find()) throw StorageException.badRequest(r.message());
        }
    }

    private static List<Rule> parse(String spec) {
        Object term;
        try {
            Reader in = new Reader(spec);
            term = in.term();
            in.end();
        } catch (IllegalArgumentException e) {
            throw serverError();
        }
        if (!(term instanceof List<?> list)) throw serverError();
        List<Rule> rules = new ArrayList<>();
        for (Object e : list) rules.add(rule(e));
        return rules;
    }

    private static Rule rule(Object e) {
        String regexp;
        String message = NOT_CONFORMING;
        if (e instanceof String s) {
            regexp = s;
        } else if (e instanceof Tuple t && (t.items().size() == 1 || t.items().size() == 2) && t.items().getFirst() instanceof String s) {
            regexp = s;
            if (t.items().size() == 2 && t.items().get(1) instanceof String reason && !reason.isEmpty()) message = NOT_CONFORMING + " " + reason;
        } else {
            throw serverError();
        }
        try {
            return new Rule(Pattern.compile(regexp), message);
        } catch (PatternSyntaxException x) {
            throw serverError();
        }
    }

    private static StorageException serverError() {
        return new StorageException(StorageException.Kind.FORBIDDEN, SERVER_ERROR);
    }

    private record Tuple(List<Object> items) {}

    /** Atoms and numbers, which no rule is made of, are read as this. */
    private record Other(String text) {}

    /** The Erlang terms such a value holds: lists, tuples, strings, and atoms or numbers. */
    private static final class Reader {
        private final String s;
        private int i;

        Reader(String s) {
            this.s = s;
        }

        Object term() {
            skip();
            if (i >= s.length()) throw new IllegalArgumentException("end of value");
            char c = s.charAt(i);
            return switch (c) {
                case '[' -> new ArrayList<>(items(']'));
                case '{' -> new Tuple(items('}'));
                case '"' -> string();
                default -> other();
            };
        }

        void end() {
            skip();
            if (i != s.length()) throw new IllegalArgumentException("more after the term");
        }

        private List<Object> items(char close) {
            i++;
            List<Object> out = new ArrayList<>();
            skip();
            if (i < s.length() && s.charAt(i) == close) {
                i++;
                return out;
            }
            while (true) {
                out.add(term());
                skip();
                if (i >= s.length()) throw new IllegalArgumentException("unclosed");
                char c = s.charAt(i++);
                if (c == close) return out;
                if (c != ',') throw new IllegalArgumentException("expected , or " + close);
            }
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++;
            while (i < s.length()) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= s.length()) break;
                char e = s.charAt(i++);
                switch (e) {
                    case 'b' -> b.append('\b');
                    case 'd' -> b.append('\u007f');
                    case 'e' -> b.append('\u001b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 's' -> b.append(' ');
                    case 't' -> b.append('\t');
                    case 'v' -> b.append('\u000b');
                    default -> {
                        if (e >= '0' && e <= '7') {
                            int n = e - '0';
                            for (int k = 0; k < 2 && i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '7'; k++) n = n * 8 + (s.charAt(i++) - '0');
                            b.append((char) n);
                        } else {
                            b.append(e); // \\, \", \' and any other character stand for themselves
                        }
                    }
                }
            }
            throw new IllegalArgumentException("unclosed string");
        }

        private Other other() {
            int start = i;
            while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || "_@.-+'".indexOf(s.charAt(i)) >= 0)) i++;
            if (i == start) throw new IllegalArgumentException("unexpected " + s.charAt(i));
            return new Other(s.substring(start, i));
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }
    }
}
