// Package bench turns signature sets into Go benchmarks that users run with
// go test, and turns their output back into predictions of a workload's GPU
// time and energy.
//
// Generate writes one Go test package per workload (see `kreplay gen`): the
// signature set, embedded, and a BenchmarkReplay whose sub-benchmarks are
// named
//
//	BenchmarkReplay/workload=<workload>/sig=<id>
//
// one per signature, so that benchstat and benchproc can key on "/workload"
// and "/sig". Each sub-benchmark calls Signature, which prepares and
// measures the signature once on the test binary's shared replay.Device
// and reports the replay's time per invocation as ns/op (replacing the
// testing package's own), with GB/s, TFLOP/s, and J/op and W when energy is
// measured.
//
// Report reads `go test -bench` output (benchfmt: several files and -count
// runs) with the signature sets and predicts each workload's GPU time and
// energy: the sum over signatures of (time per invocation x invocations in
// the trace), against the trace's GPU-busy time and a whole-model benchmark
// when one is in the output. Diff compares two such outputs as benchstat
// does, signature by signature and for the predicted totals.
//
// Data flows one way: bench imports signatures, replay and energy; only
// cmd/kreplay and the generated benchmark packages import bench.
package bench
