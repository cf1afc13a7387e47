# Sourced by the GPU machine's check scripts (gpu_check.sh):
# `step NAME SECONDS CMD...` runs CMD within SECONDS, prints `ok NAME` or
# `FAIL NAME` with the output's tail, then the output's lines matching
# $STEP_NOTES (a grep -E pattern), and counts them in $pass and $fail.
pass=0; fail=0
STEP_NOTES=${STEP_NOTES:-'random .* run on'}
step() { # NAME SECONDS CMD...
  local name=$1 secs=$2; shift 2
  local t0=$SECONDS out rc
  out=$(timeout "$secs" "$@" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "ok   $name ($((SECONDS - t0)) s)"
  else fail=$((fail + 1)); echo "FAIL $name (exit $rc, $((SECONDS - t0)) s)"; echo "$out" | tail -n 15 | sed 's/^/     /'; fi
  echo "$out" | grep -E "$STEP_NOTES" | sed 's/^/     /'
}
