// Package nvrtc is a thin binding to NVRTC, CUDA's run-time compiler,
// loaded at run time.
//
// Like package cuda, it needs no CUDA header or library to build: [Init]
// opens libnvrtc.so.13 (then .12, .11.x, the unversioned name, and the same
// names under the toolkit's lib64) with dlopen and resolves its entry points
// with dlsym. Without NVRTC every function returns an error wrapping
// [ErrNoLibrary]. NVRTC needs no GPU and no CUDA context.
//
// [Compile] turns CUDA C++ source into PTX (for a virtual architecture,
// --gpu-architecture=compute_XX) or CUBIN (for a real one, sm_XX), which
// cuda.LoadData loads. On failure the returned [*Error] carries the
// compiler log.
package nvrtc
