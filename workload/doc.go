// Package workload is the first stage of kreplay: what runs.
//
// A Spec describes a workload: a Hugging Face causal LM (built-in, from a
// config, or a model directory; dtype, attention, torch.compile, FP8
// linear layers) or the user's own program, and the inference (prefill or
// generate) with its sizes. Measure runs it for real through the
// full-model runner (internal/runner), timed and metered with NVML, for
// the whole-model side of a prediction. Capture runs it into a Bundle, a
// directory holding the spec, the profiled trace, the unprofiled run and
// the environment, which kreplay takes wherever it takes a trace.
package workload
