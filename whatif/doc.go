// Package whatif answers "what if these ops ran as one kernel?": the
// fused-kernel what-if of kreplay (the README's "What-if: a fused
// kernel", the command kreplay whatif).
//
// The user gives a CUDA kernel (source for NVRTC, or a cubin) and the
// contiguous run of traced ops it replaces, by aten op name or signature
// ID. On the CPU, Find finds every such run in the trace (per device and
// stream, in launch order) with the replaced signatures and their traced
// time, and NewPlan binds the kernel to the runs. On a GPU, Evaluate
// checks the kernel's output against the replaced ops run by kreplay's
// own kernels on the same input tensors (and against a host reference of
// the chain, Reference), replays the kernel alone as kreplay replays
// signatures, and predicts the new total GPU time and energy (Predict):
//
//	new total = predicted total - sum over replaced signatures of (replay time x invocations in the runs)
//	                            + the kernel's replay time x runs
//
// The kernel and the replaced signatures are also replayed alone in the
// Rotating cache mode (operands from device memory, as a model's
// timeline has them after the GEMMs between the runs); under the power
// limit that saving (Prediction.InContext) is the prediction the check
// compares.
//
// When the energies and the totals are known and the baseline's
// signatures draw more than the GPU's power limit back to back, the GPU
// runs at the limit, its clocks held down, and the saving is the saved
// energy over the limit (Prediction.Saving; limit.go says why and what
// was measured).
//
// At the cap, three more views calibrate on runs of the baseline's
// timeline: the plain run alone (cap.go); with -again the plain run and
// the run with each replaced run launched twice (again.go); with -removed
// the plain run and the run with the replaced runs removed (removed.go),
// the kept work measured at about the what-if's clock, the one the check
// compares whenever it is there.
//
// It then checks the prediction against the timeline replay
// (replay.Device.PrepareTimeline) with each run's launches replaced by one
// launch of the kernel (replay.TimelineOptions.Substitute).
//
// The timeline design (design.go, Prediction.TimelineDesign) is a second
// design of the saving, judged against real fused runs: the timeline
// check's measured time saving, and for energy the baseline model's
// measured mean power times it when that run draws the power limit, else
// the timeline check's energy saving.
//
// A kernel is bound to the runs through an ABI, and checked through the
// data flow of the chain it replaces, which the trace does not record:
// both come from a Recipe. The recipes so far are Hugging Face's
// LlamaRMSNorm as an f16/bf16 and as an f32 model runs it, bound to the
// row-norm ABI (RowNormABI; the worked example is examples/whatif/rmsnorm
// in the repository):
//
//	extern "C" __global__ void NAME(const T *x, const T *w, T *y, int rows, int cols, float eps)
package whatif
