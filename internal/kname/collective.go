package kname

import "strings"

// Collective reports whether a kernel name, mangled or demangled, is one
// of NCCL's device kernels (ncclDevKernel_AllReduce_Sum_bf16_RING_LL,
// ncclKernel_...): a collective that runs only with its communicator and
// its peers.
func Collective(name string) bool {
	base := BaseName(name)
	return strings.HasPrefix(base, "ncclDevKernel") || strings.HasPrefix(base, "ncclKernel") ||
		strings.Contains(name, "ncclDevKernel") || strings.Contains(name, "ncclKernel_")
}
