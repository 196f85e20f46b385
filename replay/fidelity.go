package replay

import (
	"strings"

	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
)

// Fidelities: how close a replay is to what was traced.
const (
	// FidelitySame: the traced kernel itself ran (its captured binary,
	// or the vendor library chose it), as CUPTI saw.
	FidelitySame = "same kernel"
	// FidelityOther: a vendor library ran another kernel than the traced
	// one (another GPU or library version: a projection).
	FidelityOther = "other kernel"
	// FidelityOwn: kreplay's own kernel computes the op.
	FidelityOwn = "own kernel"
	// FidelityStandIn: a stand-in moves the op's bytes.
	FidelityStandIn = "stand-in"
	// FidelityMemory: a CUDA memory operation, copied or set as traced.
	FidelityMemory = "memory op"
	// FidelityUnchecked: the kernel that ran could not be checked (no
	// CUPTI records).
	FidelityUnchecked = "unchecked"
)

// Fidelities lists the fidelities from the most to the least exact.
var Fidelities = []string{FidelitySame, FidelityMemory, FidelityOther, FidelityOwn, FidelityStandIn, FidelityUnchecked}

// fidelity says how close the replay r of sig is to the trace.
func fidelity(sig *signatures.Signature, r *Result) string {
	switch {
	case r.Approximate != "":
		return FidelityStandIn
	case sig.Tier == signatures.TierMemory:
		return FidelityMemory
	case sig.Tier == signatures.TierKernel && r.Path != PathCaptured && !strings.HasPrefix(r.Path, PathWith) &&
		r.Path != string(tier2.APICuDNNSDPA):
		if strings.HasPrefix(r.Path, "kreplay:") {
			return FidelityOwn
		}
		return FidelityStandIn
	case len(r.Ran) == 0:
		return FidelityUnchecked
	case sameActivity(sig, r.Ran):
		return FidelitySame
	}
	return FidelityOther
}
