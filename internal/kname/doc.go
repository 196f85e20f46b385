// Package kname compares CUDA kernel names as a trace and a replay report
// them: Itanium-mangled (CUPTI) or demangled (PyTorch's profiler). It is
// pure Go, so that packages that never touch CUDA (signatures) can use it
// without cgo.
package kname
