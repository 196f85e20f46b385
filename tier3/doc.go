// Package tier3 replays the ops no vendor library does for PyTorch
// (elementwise, copies and casts, fills, reductions, softmax, norms, cat,
// index and gather, embedding, scans, attention) with kreplay's own CUDA
// kernels, compiled at run time with NVRTC.
//
// Each op family registers a Builder for the aten ops it replays. A
// Builder allocates one buffer set of the op's traced tensors (shapes,
// strides and dtypes as traced, random data, in-range indices) and returns
// an Instance whose Launch runs the real computation. Where an op's time
// depends on its values, the data looks like the model's: a softmax over
// square attention scores gets them causally masked (see Config.UniformScores).
// An attention op's additive bias, whose values the trace does not
// record, is uniform like every other input (HeuristicAttnBias); the
// kernel computes every key block with it, as cuDNN does. An op with no
// builder, or whose builder cannot handle the traced case, falls back to a
// kernel that reads and writes the same bytes with the traced launch shape;
// such a replay is marked approximate.
//
// The elementwise family (elementwise ops, copies and casts, fill, arange,
// cat) replays with the strategy and launch shape of the PyTorch kernel the
// trace names (generic, vectorized, unrolled, CatArrayBatchedCopy) so that
// its time, not only its result, matches; Config.NoFaithful, or a kernel
// name not recognised, selects kreplay's fast kernels (see faithful.go).
// The fused RMS norm (aten::_fused_rms_norm, aten::rms_norm) has PyTorch's
// kernels only (rmsnorm.go); FaithfulFor says, without a GPU, which
// signatures replay the traced kernel and launch.
//
// Kernel sources live in kernels/ and are embedded. Compiled code is cached
// in memory and on disk (see Compiler), keyed by source, options, GPU
// architecture and NVRTC version, so a suite compiles each kernel once.
package tier3
