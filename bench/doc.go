// Package bench turns signature sets into Go benchmarks that users run with
// go test.
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
// testing package's own), with GB/s, TFLOP/s, J/op and W when energy is
// measured, and sm-MHz, the mean SM clock NVML sampled during the replay. Timeline and Model are the siblings: the whole traced timeline
// replayed in one CUDA graph, and the real inference (package workload).
//
// A tensor-parallel workload's ranks give one package (GenerateGroup):
// its benchmarks carry each rank's workload name, "W_rankN", and its
// BenchmarkModel runs the ranks together (GroupModel), reporting each
// rank's line with the group's time and energy.
//
// The names and metrics here are the format that package predict reads
// back. Data flows one way: bench imports signatures, replay and workload;
// predict, cmd/kreplay and the generated packages import bench.
package bench
