# Sourced by the check scripts (accept.sh, model-check.sh) after they set
# S (the summary file) and DEADLINE (seconds): say prints a line and
# appends it to $S; late tells whether DEADLINE seconds have passed since
# this was sourced; K is the kreplay to run: $KREPLAY, or one built with go.
t0=$(date +%s)
say() { echo "$*" | tee -a "$S"; }
late() { [ $(( $(date +%s) - t0 )) -ge "$DEADLINE" ]; }
K=${KREPLAY:-}
if [ -z "$K" ]; then
  go build -o /tmp/kreplay ./cmd/kreplay || exit 1
  K=/tmp/kreplay
fi
