package replay

import (
	"errors"
	"slices"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// lostScope is what checkLost needs, within one RunSet call, to leave out
// with a signature whose captured kernel failed on its first launch
// (captured.FirstLaunchError) the call's other signatures that launch that
// kernel: each would lose the context in turn in the new process. A
// PyTorch bool-mask index kernel that asserts on its captured data, say,
// runs in one signature per KV length of a decode.
type lostScope struct {
	// todo is the signatures the call would measure, in order.
	todo []*signatures.Signature
	// resolved is the call's entries resolved ahead of their turn (a
	// family's interpolated members, a shared window's group).
	resolved map[string]Entry
	// measured holds the IDs measured in the call: checkLost saw their
	// measurement return no error.
	measured map[string]bool
}

// newLostScope is the lostScope of a RunSet call that measures todo and
// resolves entries ahead of their turn into resolved.
func newLostScope(todo []*signatures.Signature, resolved map[string]Entry) *lostScope {
	return &lostScope{todo: todo, resolved: resolved, measured: map[string]bool{}}
}

// record notes s as measured when err, its measurement's, is nil. Call it
// with d.lostMu held.
func (sc *lostScope) record(s *signatures.Signature, err error) {
	if sc != nil && err == nil {
		sc.measured[s.ID] = true
	}
}

// firstLaunchKernel is the kernel whose first launch failed with err
// (captured.FirstLaunchError, a producer's included), "" when err names
// none (a fault while measuring, say).
func firstLaunchKernel(err error) string {
	var fe *captured.FirstLaunchError
	if errors.As(err, &fe) {
		return fe.Kernel
	}
	return ""
}

// sameKernel returns, sorted, the IDs of the signatures of sc that launch
// kernel in a captured replay (launchesKernel), other than id: those that
// stand alone (a part replays with the signature it is part of, which
// -skip takes instead) and have no result to lose, neither from this call
// (measured, interpolated) nor one SuiteOptions.Previous would give them
// again (Skip wins over Previous, so leaving such a one out would drop
// its result). nil for kernel "" or a nil sc.
func (sc *lostScope) sameKernel(kernel, id string, o SuiteOptions) []string {
	if sc == nil || kernel == "" {
		return nil
	}
	var ids []string
	for _, s := range sc.todo {
		if s == nil || s.ID == id || s.PartOf != "" || !launchesKernel(s, kernel) || sc.hasResult(s.ID, o) {
			continue
		}
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// hasResult reports whether the signature id has a result from this call
// or one SuiteOptions.Previous gives it again (reuse).
func (sc *lostScope) hasResult(id string, o SuiteOptions) bool {
	if sc.measured[id] {
		return true
	}
	if e, ok := sc.resolved[id]; ok && e.Result != nil {
		return true
	}
	prev, ok := o.Previous[id]
	return ok && prev.Result != nil && prev.Interpolated == ""
}

// launchesKernel reports whether s's captured binary launches kernel (a
// mangled function name): as its own kernel, or as one of its producers
// or context launches, whichever cache mode primes it with them.
func launchesKernel(s *signatures.Signature, kernel string) bool {
	b := s.Binary
	if b == nil {
		return false
	}
	if b.Launch != nil && b.Launch.Name == kernel {
		return true
	}
	for _, ps := range [][]*inject.Producer{b.Producers, b.Context} {
		for _, p := range ps {
			if p != nil && p.Launch != nil && p.Launch.Name == kernel {
				return true
			}
		}
	}
	return false
}
