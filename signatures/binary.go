package signatures

import (
	"io/fs"
	"slices"
	"sort"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/kname"
)

// Binary is the captured kernel a signature replays as launched: the
// very binary that ran, from a bundle made by `kreplay capture` (package
// captured replays it).
type Binary struct {
	// Launch is the recorded launch: function, module, shape, parameters.
	Launch *inject.Launch `json:"launch"`
	// Matched is how many of the signature's invocations were matched to
	// recorded launches; Keys how many distinct recorded launches they
	// matched (Launch is the most frequent).
	Matched int `json:"matched"`
	Keys    int `json:"keys"`
	// Producers, where the capture recorded where each call's buffers
	// lay, are the launches that last touched Launch's memory before its
	// calls, within the producerWindow launches before each, in the order
	// recorded (the list most calls have): the primed cache mode runs
	// them before each launch (package captured).
	Producers []*inject.Producer `json:"producers,omitempty"`
	// Context, where the capture recorded call pointers, are the launches
	// recorded just before its calls, within the producerWindow launches
	// before each and whatever memory they touched, oldest first (the list
	// most calls have; launches of its own function left out; for the
	// first calls of the inference, the window goes on at its end): the
	// context cache mode runs them before each launch, so that the L2
	// holds what they wrote, dirty, as in the real run.
	Context []*inject.Producer `json:"context,omitempty"`
	// PartOf and Unreplayable are the signature's as a plain trace gives
	// them, which its binary overrides (see Set.WithoutBinaries).
	PartOf       string `json:"plain_part_of,omitempty"`
	Unreplayable string `json:"plain_unreplayable,omitempty"`
	// FS holds the bundle's kernels directory (module images and
	// snapshots); set by the importer or AttachKernels, not serialized.
	FS fs.FS `json:"-"`
}

// KernelMatch says how a trace's kernels were matched to the launches a
// capture recorded.
type KernelMatch struct {
	// Traced is the trace's kernels, Recorded the recorded launches,
	// Matched the kernels matched to one.
	Traced   int `json:"traced"`
	Recorded int `json:"recorded"`
	Matched  int `json:"matched"`
	// Signatures is the number of signatures given a Binary.
	Signatures int `json:"signatures"`
	// Notes are the recorder's and the matcher's remarks.
	Notes []string `json:"notes,omitempty"`
}

// AttachKernels gives every signature's Binary the file system of its
// module images and snapshots (after ReadSet, which cannot restore it).
func (s *Set) AttachKernels(fsys fs.FS) {
	for _, sig := range s.Signatures {
		if sig.Binary != nil {
			sig.Binary.FS = fsys
		}
	}
}

// alignWindow bounds how far the matcher looks ahead to resynchronize the
// trace's kernels with the recorded launches after a mismatch.
const alignWindow = 64

// matchKernels matches the trace's kernels, in launch order, to the
// recorded launches, in order, and gives each matched activity its call
// (activity.call).
func (im *importer) matchKernels(x *inject.Index) {
	im.kernels = x
	var kern []int
	for i := range im.acts {
		if im.acts[i].act == ActivityKernel {
			kern = append(kern, i)
		}
	}
	sort.SliceStable(kern, func(a, b int) bool {
		x, y := &im.acts[kern[a]], &im.acts[kern[b]]
		if x.hasCorr && y.hasCorr && x.corr != y.corr {
			return x.corr < y.corr
		}
		return x.ts < y.ts
	})
	compat := func(ti, cj int) bool {
		k := x.Calls[cj]
		if k == "" {
			return true
		}
		return kernelMatches(&im.acts[kern[ti]], x.Launch(k))
	}
	for ti, cj := range align(len(kern), len(x.Calls), compat) {
		im.acts[kern[ti]].call = cj
	}
}

// launchKey is the key of the recorded launch activity a matched, "" if
// none (matchKernels).
func (im *importer) launchKey(a *activity) string {
	if im.kernels == nil || a.call < 0 {
		return ""
	}
	return im.kernels.Calls[a.call]
}

// attachBinaries gives each signature the recorded launch most of its
// invocations matched (matchKernels). sigOf maps each activity to its
// signature.
func (im *importer) attachBinaries(x *inject.Index, fsys fs.FS, sigOf []*Signature) *KernelMatch {
	m := &KernelMatch{Recorded: len(x.Calls), Notes: slices.Clone(x.Notes)}
	counts := map[*Signature]map[string]int{}
	calls := map[*Signature][]int{}
	for i := range im.acts {
		a := &im.acts[i]
		if a.act != ActivityKernel {
			continue
		}
		m.Traced++
		k := im.launchKey(a)
		if k == "" {
			continue
		}
		m.Matched++
		s := sigOf[i]
		if counts[s] == nil {
			counts[s] = map[string]int{}
		}
		counts[s][k]++
		calls[s] = append(calls[s], a.call)
	}
	for _, c := range calls {
		slices.Sort(c) // launch order: the alignment pairs in order
	}
	for s, c := range counts {
		best, n, total := "", 0, 0
		for k, v := range c {
			total += v
			if v > n || v == n && k < best {
				best, n = k, v
			}
		}
		s.Binary = &Binary{Launch: x.Launch(best), Matched: total, Keys: len(c), FS: fsys}
		s.Binary.Producers = producers(x, best, calls[s])
		s.Binary.Context = mostCommon(x, best, calls[s], contextOf)
		m.Signatures++
	}
	// A signature with its binary replays by it, on its own: a split-K
	// reduce kernel no longer with its GEMM, an op kreplay has no replay
	// parameters for all the same.
	for _, s := range sigOf {
		if s.Binary != nil && (s.PartOf != "" || s.Unreplayable != "") {
			s.Binary.PartOf, s.Binary.Unreplayable = s.PartOf, s.Unreplayable
			s.PartOf, s.Unreplayable = "", ""
		}
	}
	return m
}

// WithoutBinaries drops the captured binaries, so that the set replays as
// its plain trace would: each signature by its tier, a split-K reduce
// kernel inside its GEMM again (a binary had made it stand alone).
func (s *Set) WithoutBinaries() {
	for _, sig := range s.Signatures {
		if b := sig.Binary; b != nil {
			sig.PartOf, sig.Unreplayable, sig.Binary = b.PartOf, b.Unreplayable, nil
		}
	}
}

// producerWindow is how many launches before a call producers looks back
// for the last launch to touch each of its pointers: a decode step's
// RMSNorm multiplies the f32 hidden state that the square read four
// launches before (copy, pow, mean, add, rsqrt, mul); a few launches of a
// small step move far less than the L2 holds, so what they touched is
// still there in the real run.
const producerWindow = 8

// producers finds, for the calls (indexes into x.Calls) of key, the
// launches that last touched each call's memory within the producerWindow
// launches before it, with how their pointers alias the call's, oldest
// first: the list most calls have, with the aliases of its first call.
// Nil when the index has no call pointers or no call has such launches. A
// launch of the same function is passed over: the replay tells the
// producers' activities from the signature's by name.
func producers(x *inject.Index, key string, calls []int) []*inject.Producer {
	return mostCommon(x, key, calls, touchers)
}

// mostCommon returns, of the lists that of gives for the calls of key, the
// one most calls have (with the aliases of its first call); nil when the
// index has no call pointers or every list is empty.
func mostCommon(x *inject.Index, key string, calls []int, of func(*inject.Index, *inject.Launch, int) []*inject.Producer) []*inject.Producer {
	if x.CallPtrs == nil {
		return nil
	}
	cons := x.Launch(key)
	count := map[string]int{}
	first := map[string][]*inject.Producer{}
	for _, cj := range calls {
		if x.Calls[cj] != key {
			continue
		}
		list := of(x, cons, cj)
		if len(list) == 0 {
			continue
		}
		id := ""
		for _, p := range list {
			id += p.Launch.Key + ","
		}
		if _, seen := first[id]; !seen {
			first[id] = list
		}
		count[id]++
	}
	best, n := "", 0
	for k, v := range count {
		if v > n || v == n && k < best {
			best, n = k, v
		}
	}
	return first[best]
}

// touchers returns, for call cj of launch cons, the launches among the
// producerWindow before it that were the last to touch one of its
// pointers, oldest first, each with all its aliases.
func touchers(x *inject.Index, cons *inject.Launch, cj int) []*inject.Producer {
	covered := make([]bool, len(cons.Ptrs))
	var out []*inject.Producer
	for pj := cj - 1; pj >= 0 && pj >= cj-producerWindow; pj-- {
		pk := x.Calls[pj]
		prod := x.Launch(pk)
		if pk == "" || prod == nil || prod.Name == cons.Name {
			continue
		}
		alias := inject.FindAlias(prod, x.CallPtrs[pj], cons, x.CallPtrs[cj])
		fresh := false
		for _, a := range alias {
			fresh = fresh || !covered[a[1]]
			covered[a[1]] = true
		}
		if fresh {
			out = append(out, &inject.Producer{Launch: prod, Alias: alias})
		}
	}
	slices.Reverse(out)
	return out
}

// contextOf returns, for call cj of launch cons, the launches among the
// producerWindow before it, oldest first, each with its aliases of
// cons's memory (perhaps none), leaving out launches of cons's function
// (the replay tells its activities from theirs by name). A call near the
// start of the recorded inference takes the rest of its window from the
// inference's end: inferences run back to back, and the one recorded
// came after warm-up inferences of its own kind, so what ran just before
// its first kernels was the previous inference's last (an LM head's
// logits, dirty in the L2, before the embedding gather).
func contextOf(x *inject.Index, cons *inject.Launch, cj int) []*inject.Producer {
	var out []*inject.Producer
	for pj := cj - producerWindow; pj < cj; pj++ {
		j := pj
		if j < 0 {
			j += len(x.Calls)
			if j <= cj {
				continue // a recorded inference shorter than the window
			}
		}
		pk := x.Calls[j]
		prod := x.Launch(pk)
		if pk == "" || prod == nil || prod.Name == cons.Name {
			continue
		}
		out = append(out, &inject.Producer{Launch: prod, Alias: inject.FindAlias(prod, x.CallPtrs[j], cons, x.CallPtrs[cj]), Context: true})
	}
	return out
}

// align pairs the positions of two sequences that should be the same
// launches in the same order: pairs while compat holds, and after a
// mismatch skips the fewest elements (at most alignWindow) on either side
// that resynchronize them. It returns, per element of the first, the
// paired element of the second or -1.
func align(n, m int, compat func(i, j int) bool) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	i, j := 0, 0
	for i < n && j < m {
		if compat(i, j) {
			out[i] = j
			i, j = i+1, j+1
			continue
		}
		di, dj, found := resync(i, j, n, m, compat)
		if !found {
			i, j = i+1, j+1
			continue
		}
		i, j = i+di, j+dj
	}
	return out
}

func resync(i, j, n, m int, compat func(i, j int) bool) (int, int, bool) {
	for d := 1; d <= alignWindow; d++ {
		for di := 0; di <= d; di++ {
			dj := d - di
			if i+di < n && j+dj < m && compat(i+di, j+dj) {
				return di, dj, true
			}
		}
	}
	return 0, 0, false
}

// kernelMatches reports whether a traced kernel is the recorded launch l:
// the same grid and block, dynamic shared memory (the trace may add the
// static part) and name (the trace's is demangled).
func kernelMatches(a *activity, l *inject.Launch) bool {
	if l == nil {
		return false
	}
	for d := 0; d < 3; d++ {
		if a.launch.Grid[d] != int64(l.Grid[d]) || a.launch.Block[d] != int64(l.Block[d]) {
			return false
		}
	}
	if sm := a.launch.SharedMem; sm != int64(l.Smem) && sm != int64(l.Smem)+int64(l.StaticSmem) {
		return false
	}
	return SameFunction(a.name, l.Name)
}

// SameFunction reports whether a traced kernel name (demangled, as Kineto
// writes it) and a recorded one (mangled) name the same function.
func SameFunction(traced, recorded string) bool { return kname.SameKernel(traced, recorded) }
