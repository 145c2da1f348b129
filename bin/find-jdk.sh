# Sourced by ./chaise and the benchmark scripts: prints a JDK 21+ home, preferring JAVA_HOME.
java_major() { "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | cut -d. -f1; }

find_jdk() {
  local c
  for c in "${JAVA_HOME:-}" $(ls -d /usr/lib/jvm/* /opt/java/* /opt/jdk* 2>/dev/null | sort -rV); do
    [ -n "$c" ] && [ -x "$c/bin/javac" ] || continue
    if [ "$(java_major "$c/bin/java")" -ge 21 ] 2>/dev/null; then echo "$c"; return 0; fi
  done
  c=$(command -v javac 2>/dev/null || true)
  if [ -n "$c" ]; then
    c=$(dirname "$(dirname "$(readlink -f "$c")")")
    if [ "$(java_major "$c/bin/java")" -ge 21 ] 2>/dev/null; then echo "$c"; return 0; fi
  fi
  echo "no JDK 21 or newer found; set JAVA_HOME" >&2
  return 1
}
