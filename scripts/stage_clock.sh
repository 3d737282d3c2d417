# The stages' clock of scripts/test.sh: each stage's wall time, and at the
# end (whether the run passed or not) a table of them with the total.  A
# total over STAGE_BUDGET_SECONDS (CI's lane: 45 minutes; 0 for none) adds
# a warning naming the slowest stages; time alone never fails a run.
# Sourced, not run.

STAGE_NAMES=()
STAGE_SECONDS=()
STAGE_CURRENT=""
STAGE_STARTED=0
CLOCK_STARTED=$SECONDS
STAGE_BUDGET_SECONDS=${STAGE_BUDGET_SECONDS:-2700}

# stage NAME: NAME starts now, and whatever stage ran before it ends.
stage() {
  stage_end
  STAGE_CURRENT=$1
  STAGE_STARTED=$SECONDS
  say "stage ${#STAGE_NAMES[@]}: $1"
}

stage_end() {
  [[ -n $STAGE_CURRENT ]] || return 0
  STAGE_NAMES+=("$STAGE_CURRENT")
  STAGE_SECONDS+=($((SECONDS - STAGE_STARTED)))
  STAGE_CURRENT=""
}

minutes() { printf "%d:%02d" $(($1 / 60)) $(($1 % 60)); }

# The table, on stdout; called from an EXIT trap, so a failed stage is
# listed too, marked as the one that stopped the run.
stage_report() {
  local status=$1 stopped=${STAGE_CURRENT:-} i total=$((SECONDS - CLOCK_STARTED))
  stage_end
  ((${#STAGE_NAMES[@]})) || return 0
  echo
  say "stage times (min:s)"
  for i in "${!STAGE_NAMES[@]}"; do
    local mark=""
    [[ $status != 0 && ${STAGE_NAMES[i]} == "$stopped" ]] && mark="   <- failed here"
    printf "   %2d  %-58s %6s%s\n" "$i" "${STAGE_NAMES[i]}" "$(minutes "${STAGE_SECONDS[i]}")" "$mark"
  done
  printf "       %-58s %6s\n" "total" "$(minutes "$total")"
  if ((STAGE_BUDGET_SECONDS && total > STAGE_BUDGET_SECONDS)); then
    local slowest
    slowest=$(for i in "${!STAGE_NAMES[@]}"; do echo "${STAGE_SECONDS[i]} $i"; done | sort -rn | head -3 |
      while read -r s i; do printf "%s (%s), " "${STAGE_NAMES[i]}" "$(minutes "$s")"; done)
    echo "WARNING: the run took $(minutes "$total"), over its budget of $(minutes "$STAGE_BUDGET_SECONDS") (CI stops at 90:00); slowest: ${slowest%, }"
  fi
}
