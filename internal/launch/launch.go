// Package launch holds what the replay tiers share to build kernels:
// random input data (RandomPattern, FillRandom) and dtype conversions.
// The contract between the tiers and package replay (Kernel, Work,
// Options, ...) is package gpu's; the names below alias it for the
// tiers' internal code.
package launch

import (
	"time"

	"github.com/kreplay/kreplay/gpu"
)

// Aliases of package gpu's contract.
type (
	Kernel    = gpu.Kernel
	Primer    = gpu.Primer
	AuxMemcpy = gpu.AuxMemcpy
	AuxMemset = gpu.AuxMemset
	Streamed  = gpu.Streamed
	Paced     = gpu.Paced
	Work      = gpu.Work
	Options   = gpu.Options
)

// PaceOf is gpu.PaceOf.
func PaceOf(k Kernel) time.Duration { return gpu.PaceOf(k) }

// IsStreamed is gpu.IsStreamed.
func IsStreamed(k Kernel) bool { return gpu.IsStreamed(k) }

// SetsFor is gpu.SetsFor.
func SetsFor(footprint, l2, budget int64, maxSets int) int {
	return gpu.SetsFor(footprint, l2, budget, maxSets)
}
