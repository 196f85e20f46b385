// Package workload is the first stage of kreplay: what runs. It describes
// a workload (a model and its inference) and runs it for real in PyTorch
// through the full-model runner (internal/runner), timed and metered with
// NVML, for the whole-model side of a prediction.
package workload
