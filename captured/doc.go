// Package captured replays a kernel as it was launched: the very binary
// the workload ran (a Triton, cuDNN, cuBLAS, flash-attention or PyTorch
// kernel, whatever library launched it), recorded by `kreplay capture`
// (package internal/inject).
//
// New loads the recorded module image, finds the function by its mangled
// name and checks that it takes the recorded parameters, then rebuilds
// its parameter buffer: every device pointer is re-pointed into a replay
// buffer as large as the allocation it pointed into, at the same offset,
// so that pointers into one allocation keep their relation; so are the
// pointers the capture found stored in those buffers (inject.Inner: a
// grouped GEMM's arrays of operand addresses), each into a buffer of its
// own allocation's size where no parameter points into it. A word the
// capture took for a pointer that is likely packed fields (odd, and the
// launch's only pointer into its allocation: a dtype word with stale
// bytes) is kept as recorded, and a producer with a lone pointer off an
// 8-byte boundary is left out of the priming (see suspects). Each buffer
// holds the bytes the kernel found at capture, where they were kept, tiled
// over the buffer (package inject's snapshot policy), and zeros where
// nothing was kept. The launch uses the recorded grid, block, dynamic
// shared memory and launch attributes (clusters among them).
package captured
