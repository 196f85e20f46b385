# Sourced by the check scripts (accept.sh, model-check.sh) after they set
# S (the summary file) and DEADLINE (seconds): say prints a line and
# appends it to $S; late tells whether DEADLINE seconds have passed since
# this was sourced; left bounds a timeout by the seconds left to it; K
# is the kreplay to run: $KREPLAY, or one built with go.
t0=$(date +%s)
say() { echo "$*" | tee -a "$S"; }
late() { [ $(( $(date +%s) - t0 )) -ge "$DEADLINE" ]; }
# left N: N, or the seconds left to DEADLINE where fewer (at least 1).
left() { local l=$(( DEADLINE - ($(date +%s) - t0) )); [ "$l" -lt "$1" ] || l=$1; [ "$l" -ge 1 ] || l=1; echo "$l"; }
K=${KREPLAY:-}
if [ -z "$K" ]; then
  go build -o /tmp/kreplay ./cmd/kreplay || exit 1
  K=/tmp/kreplay
fi
