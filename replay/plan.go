package replay

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
	"github.com/kreplay/kreplay/tier3"
)

// Replay paths, as PlanPath names them.
const (
	PlanCaptured     = "captured binary"
	PlanLibrary      = "vendor library"
	PlanOwn          = "own kernel"
	PlanOwnFaithful  = "own kernel (faithful)"
	PlanStandIn      = "stand-in"
	PlanUnreplayable = "unreplayable"
	PlanPartOf       = "part of another"
	PlanMemory       = "CUDA memory op"
)

// PlanWhyCuDNNSDPA begins the reason PlanPath gives for a cuDNN SDPA op
// of a plain trace, replayed through cuDNN (tier2.NewAttention).
const PlanWhyCuDNNSDPA = "cuDNN SDPA"

// PlanPath says, without a GPU, how a signature will replay: by its
// captured binary, a vendor library (cuBLAS, cuBLASLt, NCCL, cuDNN's
// SDPA, which falls back to kreplay's flash kernel where cuDNN fails), kreplay's
// own kernel (which falls back to the stand-in for inputs it does not
// handle, as the replay then says; "faithful" where the op's family says
// it reproduces the traced PyTorch kernel and launch, tier3.FaithfulFor),
// a stand-in that moves the op's bytes,
// a CUDA memory op, inside another signature, or not at all; and why,
// where there is more to say. cfg is how tier 3 will replay (Device.Tier3).
func PlanPath(sig *signatures.Signature, cfg tier3.Config) (path, why string) {
	var overflow error
	if sig.Binary != nil && sig.Binary.Launch != nil {
		overflow = sig.Binary.Launch.InnerOverflow()
	}
	switch {
	case overflow != nil:
		return PlanUnreplayable, "its captured launch: " + overflow.Error()
	case sig.Binary != nil:
		switch {
		case Auto.For(sig) == Rotating:
			return PlanCaptured, "rotating buffer sets"
		case len(sig.Binary.Producers) > 0:
			return PlanCaptured, primedBy(sig.Binary.Producers)
		}
		return PlanCaptured, "from a clean L2"
	case sig.PartOf != "":
		return PlanPartOf, sig.PartOf
	case sig.Tier == signatures.TierMemory:
		return PlanMemory, string(sig.Class)
	case sig.Class == signatures.ClassCollective:
		return PlanLibrary, "NCCL"
	case sig.Class == signatures.ClassGEMM && sig.Tier == signatures.TierLibrary && sig.GEMM != nil && sig.GEMM.Grouped != nil:
		return PlanStandIn, "cuBLAS: " + sig.GEMM.Grouped.Guess(sig.GEMM.M)
	case sig.Class == signatures.ClassGEMM && sig.Tier == signatures.TierLibrary && sig.GEMM != nil:
		if sc := sig.GEMM.Scaled; sc != nil && tier2.PlanAPI(sig.GEMM) == tier2.APILtMatmulFP8 {
			why := "cuBLASLt FP8 " + sc.Scaling
			if sig.GEMM.Bias {
				why += "+bias"
			}
			return PlanLibrary, why
		}
		return PlanLibrary, "cuBLAS/cuBLASLt"
	case sig.Class == signatures.ClassGEMM && sig.Tier == signatures.TierLibrary:
		why := "GEMM signature without parameters"
		if sig.Unreplayable != "" {
			why = strings.TrimPrefix(sig.Unreplayable, "unreplayable: ")
		}
		return PlanUnreplayable, why
	case sig.Tier == signatures.TierKernel && sig.Unreplayable != "":
		return PlanStandIn, sig.Unreplayable
	case sig.Tier == signatures.TierKernel && tier2.PlanCuDNNSDPA(sig):
		why = PlanWhyCuDNNSDPA
		if h := tier3.Heuristics(sig, cfg); len(h) > 0 {
			why += "; inputs: " + strings.Join(h, ", ") + " (a guess: the trace records no values)"
		}
		return PlanLibrary, why + "; kreplay's kernel where cuDNN does not load or its graph does not build"
	case sig.Tier == signatures.TierKernel && tier3.Has(sig.Op):
		why = strings.TrimPrefix(sig.Op, "aten::")
		if h := tier3.Heuristics(sig, cfg); len(h) > 0 {
			why += "; inputs: " + strings.Join(h, ", ")
			if slices.Contains(h, tier3.HeuristicCausal) {
				why += " (a guess: -causal-scores=false turns it off)"
			} else {
				why += " (a guess: the trace records no values)"
			}
		}
		if tier3.FaithfulFor(sig, cfg) {
			return PlanOwnFaithful, why
		}
		return PlanOwn, why
	case sig.Tier == signatures.TierKernel:
		if why := signatures.TritonStandIn(sig); why != "" {
			return PlanStandIn, why
		}
		return PlanStandIn, fmt.Sprintf("no kreplay kernel for %s yet", planOp(sig))
	}
	return PlanUnreplayable, fmt.Sprintf("tier %d class %s", sig.Tier, sig.Class)
}

func planOp(sig *signatures.Signature) string {
	if sig.Op == "" {
		return "kernel " + sig.Kernel
	}
	return sig.Op
}

// PlanPaths plans every signature of a set (PlanPath, with cfg): the totals by path,
// largest first, and each signature's path with its reason.
func PlanPaths(set *signatures.Set, cfg tier3.Config) ([]signatures.PathTotal, map[string]string) {
	by := map[string]*signatures.PathTotal{}
	of := map[string]string{}
	var all int64
	for _, sig := range set.Signatures {
		path, why := PlanPath(sig, cfg)
		of[sig.ID] = path
		if why != "" {
			of[sig.ID] = path + ": " + why
		}
		t := by[path]
		if t == nil {
			t = &signatures.PathTotal{Path: path}
			by[path] = t
		}
		t.Signatures++
		t.TracedNS += sig.TracedNS.Total
		all += sig.TracedNS.Total
	}
	out := make([]signatures.PathTotal, 0, len(by))
	for _, t := range by {
		if all > 0 {
			t.Share = float64(t.TracedNS) / float64(all)
		}
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TracedNS != out[j].TracedNS {
			return out[i].TracedNS > out[j].TracedNS
		}
		return out[i].Path < out[j].Path
	})
	return out, of
}

// primedBy says which launches prime a captured binary: the last one,
// the kernel's producer, by name, and how many ran before it.
func primedBy(ps []*inject.Producer) string {
	last := ps[len(ps)-1].Launch.Name
	if len(ps) == 1 {
		return "primed by its producer " + last
	}
	return fmt.Sprintf("primed by its producer %s and %d launches before it", last, len(ps)-1)
}
