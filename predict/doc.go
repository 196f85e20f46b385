// Package predict turns replay results into predictions and compares them.
//
// Report reads `go test -bench` output (benchfmt: several files and -count
// runs) with the signature sets and predicts each workload's GPU time and
// energy: the sum over signatures of (time per invocation x invocations in
// the trace), against the trace's GPU-busy time and a whole-model benchmark
// when one is in the output. Diff compares two such outputs as benchstat
// does, signature by signature and for the predicted totals. Flow runs the
// whole flow on a GPU (`kreplay predict`) and writes the same benchmark
// format. WritePlots draws the report.
//
// predict imports bench (its benchmark names and metrics), replay and
// workload; only cmd/kreplay imports predict.
package predict
