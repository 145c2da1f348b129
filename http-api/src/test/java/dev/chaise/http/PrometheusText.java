package dev.chaise.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A strict parser of Prometheus' text exposition format 0.0.4, written from its specification for
 * the tests: it rejects what Prometheus' own parser rejects (bad names, bad escapes, a TYPE after
 * samples or twice, a family split in two, duplicate series, unparsable values), and checks what a
 * scraper relies on: histograms have cumulative buckets ending in {@code le="+Inf"} equal to
 * {@code _count}, with a {@code _sum}; summaries have {@code _sum} and {@code _count}; counters are not negative.
 */
final class PrometheusText {
    record Sample(String name, Map<String, String> labels, double value) {}

    record Family(String name, String type, String help, List<Sample> samples) {}

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "histogram", "summary", "untyped");

    private PrometheusText() {}

    static Map<String, Family> parse(String text) {
        if (!text.endsWith("\n")) throw new IllegalArgumentException("the exposition must end with a line feed");
        Map<String, Family> families = new LinkedHashMap<>();
        Map<String, String> types = new HashMap<>();
        Map<String, String> helps = new HashMap<>();
        Set<String> series = new HashSet<>();
        Set<String> closed = new HashSet<>();
        String current = null;
        int lineNo = 0;
        for (String line : text.split("\n", -1)) {
            lineNo++;
            if (line.isEmpty()) continue;
            String where = "line " + lineNo + ": " + line;
            if (line.startsWith("#")) {
                String[] p = line.split(" ", 4);
                if (p.length >= 3 && (p[1].equals("TYPE") || p[1].equals("HELP"))) {
                    String name = p[2];
                    if (!NAME.matcher(name).matches()) throw new IllegalArgumentException("bad metric name, " + where);
                    if (p[1].equals("TYPE")) {
                        if (p.length != 4 || !TYPES.contains(p[3])) throw new IllegalArgumentException("bad TYPE, " + where);
                        if (types.containsKey(name)) throw new IllegalArgumentException("second TYPE, " + where);
                        if (families.containsKey(name)) throw new IllegalArgumentException("TYPE after samples, " + where);
                        types.put(name, p[3]);
                    } else {
                        if (helps.containsKey(name)) throw new IllegalArgumentException("second HELP, " + where);
                        helps.put(name, p.length == 4 ? unescape(p[3], false, where) : "");
                    }
                }
                continue;
            }
            Matcher m = NAME.matcher(line);
            if (!m.lookingAt()) throw new IllegalArgumentException("bad sample name, " + where);
            String name = m.group();
            int i = m.end();
            Map<String, String> labels = new LinkedHashMap<>();
            if (i < line.length() && line.charAt(i) == '{') {
                i++;
                while (line.charAt(i) != '}') {
                    Matcher ln = LABEL_NAME.matcher(line).region(i, line.length());
                    if (!ln.lookingAt()) throw new IllegalArgumentException("bad label name, " + where);
                    String label = ln.group();
                    i = ln.end();
                    if (line.charAt(i) != '=' || line.charAt(i + 1) != '"') throw new IllegalArgumentException("expected =\", " + where);
                    i += 2;
                    StringBuilder v = new StringBuilder();
                    while (line.charAt(i) != '"') {
                        char c = line.charAt(i++);
                        if (c == '\\') {
                            char e = line.charAt(i++);
                            v.append(switch (e) {
                                case '\\' -> '\\';
                                case '"' -> '"';
                                case 'n' -> '\n';
                                default -> throw new IllegalArgumentException("bad escape \\" + e + ", " + where);
                            });
                        } else {
                            v.append(c);
                        }
                    }
                    i++;
                    if (labels.put(label, v.toString()) != null) throw new IllegalArgumentException("label twice, " + where);
                    if (line.charAt(i) == ',') i++;
                    else if (line.charAt(i) != '}') throw new IllegalArgumentException("expected , or }, " + where);
                }
                i++;
            }
            if (i >= line.length() || line.charAt(i) != ' ') throw new IllegalArgumentException("expected a space before the value, " + where);
            String[] rest = line.substring(i + 1).split(" ");
            if (rest.length > 2) throw new IllegalArgumentException("trailing fields, " + where);
            double value = number(rest[0], where);
            if (rest.length == 2) Long.parseLong(rest[1]);
            String family = familyOf(name, types);
            if (!family.equals(current)) {
                if (closed.contains(family)) throw new IllegalArgumentException("family " + family + " is split, " + where);
                if (current != null) closed.add(current);
                current = family;
            }
            if (!series.add(name + labels)) throw new IllegalArgumentException("duplicate series, " + where);
            families.computeIfAbsent(family, f -> new Family(f, types.getOrDefault(f, "untyped"), helps.get(f), new ArrayList<>()))
                    .samples().add(new Sample(name, labels, value));
        }
        families.values().forEach(PrometheusText::check);
        return families;
    }

    private static String familyOf(String sample, Map<String, String> types) {
        if (types.containsKey(sample)) return sample;
        for (String suffix : List.of("_bucket", "_count", "_sum")) {
            if (sample.endsWith(suffix)) {
                String base = sample.substring(0, sample.length() - suffix.length());
                String t = types.get(base);
                if ("histogram".equals(t) || ("summary".equals(t) && !suffix.equals("_bucket"))) return base;
            }
        }
        return sample;
    }

    private static void check(Family f) {
        switch (f.type()) {
            case "counter" -> f.samples().forEach(s -> {
                if (s.value() < 0) throw new IllegalArgumentException("negative counter " + s);
            });
            case "histogram" -> {
                Map<Map<String, String>, List<Sample>> byLabels = new LinkedHashMap<>();
                Map<Map<String, String>, Double> counts = new HashMap<>();
                Set<Map<String, String>> sums = new HashSet<>();
                for (Sample s : f.samples()) {
                    Map<String, String> rest = new LinkedHashMap<>(s.labels());
                    if (s.name().endsWith("_bucket")) {
                        if (rest.remove("le") == null) throw new IllegalArgumentException("bucket without le: " + s);
                        byLabels.computeIfAbsent(rest, k -> new ArrayList<>()).add(s);
                    } else if (s.name().endsWith("_count")) {
                        counts.put(rest, s.value());
                    } else if (s.name().endsWith("_sum")) {
                        sums.add(rest);
                    }
                }
                if (byLabels.isEmpty()) throw new IllegalArgumentException("histogram without buckets: " + f.name());
                byLabels.forEach((labels, buckets) -> {
                    double le = Double.NEGATIVE_INFINITY;
                    double cumulative = 0;
                    for (Sample b : buckets) {
                        double bound = number(b.labels().get("le"), b.toString());
                        if (bound <= le) throw new IllegalArgumentException("buckets out of order: " + b);
                        if (b.value() < cumulative) throw new IllegalArgumentException("buckets not cumulative: " + b);
                        le = bound;
                        cumulative = b.value();
                    }
                    if (le != Double.POSITIVE_INFINITY) throw new IllegalArgumentException("no +Inf bucket in " + f.name() + labels);
                    if (!counts.containsKey(labels) || counts.get(labels) != cumulative) throw new IllegalArgumentException("_count differs from +Inf in " + f.name());
                    if (!sums.contains(labels)) throw new IllegalArgumentException("no _sum in " + f.name() + labels);
                });
            }
            case "summary" -> {
                boolean count = f.samples().stream().anyMatch(s -> s.name().equals(f.name() + "_count"));
                boolean sum = f.samples().stream().anyMatch(s -> s.name().equals(f.name() + "_sum"));
                if (!count || !sum) throw new IllegalArgumentException("summary without _count or _sum: " + f.name());
                f.samples().stream().filter(s -> s.name().equals(f.name())).forEach(s -> {
                    double q = number(s.labels().getOrDefault("quantile", "x"), s.toString());
                    if (q < 0 || q > 1) throw new IllegalArgumentException("bad quantile: " + s);
                });
            }
            default -> { }
        }
    }

    private static double number(String v, String where) {
        return switch (v) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> {
                if (!v.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?")) throw new IllegalArgumentException("bad value " + v + ", " + where);
                yield Double.parseDouble(v);
            }
        };
    }

    private static String unescape(String s, boolean quotes, String where) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(++i);
            if (e == '\\') b.append('\\');
            else if (e == 'n') b.append('\n');
            else if (quotes && e == '"') b.append('"');
            else throw new IllegalArgumentException("bad escape in HELP, " + where);
        }
        return b.toString();
    }
}
