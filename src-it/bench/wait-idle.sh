# Sourced by side-by-side.sh and first-round-jit.sh: the wait before a measured run.
# wait_idle <pid>: until the process used under 5 ticks (1/100 s) of CPU in one second, at most
# IDLE_MAX seconds (default 60); prints the seconds waited.
wait_idle() {
  local t=0 a b
  b=$(awk '{print $14 + $15}' "/proc/$1/stat")
  while [ "$t" -lt "${IDLE_MAX:-60}" ]; do
    sleep 1
    t=$((t + 1))
    a=$b
    b=$(awk '{print $14 + $15}' "/proc/$1/stat")
    [ $((b - a)) -lt 5 ] && break
  done
  echo "$t"
}
