package replay

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/energy"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
)

// ErrTimelineMemory is returned by PrepareTimeline when the buffers of all
// the timeline's signatures do not fit in device memory together.
var ErrTimelineMemory = errors.New("timeline: the signatures' buffers do not fit in device memory together")

// TimelineOptions tune PrepareTimeline. The zero value replays every
// signature that can replay on one device.
type TimelineOptions struct {
	// Tiers, when not empty, replays only signatures of these tiers; the
	// others are skipped.
	Tiers []signatures.Tier
	// NoApproximate skips signatures whose replay only moves the op's
	// bytes (Prepared.Approximate).
	NoApproximate bool
	// Reserve is the device memory left free once every signature is
	// prepared, for the graph and the libraries' workspaces (default
	// 1 GiB).
	Reserve int64
	// Gap is an idle time after each launch of the timeline, in its timed
	// samples and its energy window: the real inference's time outside
	// the trace's busy time (a model run's wall time less the busy time),
	// so that the GPU's power limiter sees the duty the real run has. 0
	// launches it back to back.
	Gap time.Duration
	// Substitute replaces runs of the timeline's invocations with one
	// launch each of a kernel prepared outside the timeline (a what-if's
	// fused kernel, package whatif). The timeline does not close them.
	Substitute []Substitution
	// Skip leaves signatures out, by ID, each with the reason the
	// timeline's skips give (SuiteOptions.Skip).
	Skip map[string]string
	// Again launches runs of the timeline's invocations a second time:
	// each run (indices into the set's Timeline, increasing, none
	// substituted) again right after its last invocation, on the same
	// buffers. A probe of the workload's response to more of those ops
	// (package whatif: the replaced runs twice); 0 runs: none.
	Again [][]int
	// AgainTimes is how many more times each Again run is launched
	// right after itself (0: once).
	AgainTimes int
	// DataFlow gives the captured binaries the buffers of the
	// allocations they point into shared among them, one per recorded
	// allocation (captured.Shared): each kernel reads where its
	// producer wrote in the capture, the real inference's data flow
	// through the L2, where by default each signature has buffers of its
	// own and its memory-bound kernels run longer than in the real run
	// (results/h200/l2-dirty/). Other signatures keep their own. An
	// experiment: the kernels' times come out as traced, but the values
	// they compute drift from real data (the census,
	// TimelineResult.SharedAfter), and with them the energy. Before the
	// graph is captured, the launches run once one at a time: where one
	// fails on the drifted values (a decode's index out of range),
	// PrepareTimeline returns ErrDataFlowFault naming it, and the GPU's
	// context is lost. A launch can still fail in a later pass, as the
	// values drift further: Measure then fails with it
	// (results/h200/timeline-dataflow/).
	DataFlow bool
	// AgainAfter, when set, holds for each Again run the invocation
	// after which it is launched again (an index into the set's
	// Timeline, at or after the run's last invocation) instead of right
	// after the run: a probe of how the repeat's place matters.
	AgainAfter []int
}

// Substitution replaces a run of a timeline's invocations with one launch
// of With's buffer set 0, where the run's first invocation was: the other
// invocations of the run are not launched. A signature whose invocations
// are all substituted is not prepared.
type Substitution struct {
	// Invocations are indices into the set's Timeline, increasing.
	Invocations []int
	// With is the kernel launched in their place (prepared by the
	// caller, PrepareWith, in the Warm cache mode; capturable). Nil
	// removes the run: nothing launches in its place, the most that
	// replacing it could save.
	With *Prepared
}

// TimelineSkip is a signature of the timeline that is not replayed.
type TimelineSkip struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Reason string `json:"reason"`
	// Invocations and TracedNS are its invocations in the timeline and
	// their summed traced durations.
	Invocations int   `json:"invocations"`
	TracedNS    int64 `json:"traced_ns"`
}

// Timeline is a signature set's whole timeline made launchable on one
// device: every replayable signature prepared once (warm cache mode, one
// buffer set) and one CUDA graph that launches each invocation of the
// trace in the timeline's order on the device's stream. Invocations the
// trace ran on several streams or devices run one after the other.
type Timeline struct {
	Set *signatures.Set
	// Prepared are the replayed signatures, in the set's order.
	Prepared []*Prepared
	// Launched is the invocations the graph launches; Skipped and
	// SkippedNS count the invocations not replayed and their traced time.
	// Parts counts the invocations of signatures that are part of
	// another (PartOf): they are not launched on their own but run
	// inside their parent's replay, and are in neither count; the traced
	// time of parts whose parent is skipped is in SkippedNS.
	Launched  int
	Skipped   int
	SkippedNS int64
	Parts     int
	// Skips lists the skipped signatures with the reason, by traced time.
	Skips []TimelineSkip
	// Substituted counts the invocations TimelineOptions.Substitute
	// replaced (parts included) and SubstitutedNS their traced time; the
	// substitutes' launches are in Launched.
	Substituted   int
	SubstitutedNS int64
	// Again counts the launches TimelineOptions.Again added (in
	// Launched too).
	Again int
	// BufferBytes is the device memory the prepared signatures' buffers
	// take (their footprints times their buffer sets; with DataFlow, the
	// shared buffers once).
	BufferBytes int64
	// SharedBuffers is, with DataFlow, the recorded allocations whose
	// buffers the captured binaries share and SharedBytes their bytes;
	// SharedBefore what those buffers held once prepared
	// (captured.Census), before the graph's first launch, and
	// SharedErr why it could not be read.
	SharedBuffers int
	SharedBytes   int64
	SharedBefore  captured.Census
	SharedErr     string
	// TracedNS is the summed duration of all the timeline's invocations;
	// BusyNS the trace's GPU-busy time (the union of their intervals).
	TracedNS int64
	BusyNS   int64

	dev   *Device
	gap   time.Duration
	graph *cuda.GraphExec
	order []*Prepared // the invocations the graph launches, in order
	// orderInv is, for each launch of order, its invocation's index in
	// the set's Timeline (a substitute's: its run's first; -1 for a
	// launch Again added).
	orderInv []int
	subs     []*Prepared // the substitutes, once each (not closed by Close)
	shared   *captured.Shared
}

// MeasureTimeline prepares set's timeline (PrepareTimeline), measures it
// (Timeline.Measure) and frees it.
func (d *Device) MeasureTimeline(set *signatures.Set, to TimelineOptions, o Options) (*TimelineResult, error) {
	tl, err := d.PrepareTimeline(set, to)
	if err != nil {
		return nil, err
	}
	defer tl.Close()
	return tl.Measure(o)
}

// PrepareTimeline prepares every signature set's timeline uses that can
// replay on one device and captures one CUDA graph of all their
// invocations in timeline order, with o.Substitute's runs replaced by
// their kernels. Signatures that are part of another are launched by
// their parent; collectives, unreplayable signatures and those that fail
// to prepare or cannot be captured are skipped with the reason
// (Timeline.Skips). It fails with ErrTimelineMemory when the signatures'
// buffers do not fit in device memory together, and with
// ErrDataFlowFault when a launch fails on the recorded data flow.
func (d *Device) PrepareTimeline(set *signatures.Set, o TimelineOptions) (*Timeline, error) {
	if set == nil {
		return nil, errors.New("timeline: no set")
	}
	if o.Reserve <= 0 {
		o.Reserve = memoryReserve
	}
	t := &Timeline{Set: set, dev: d, gap: max(0, o.Gap)}
	if o.DataFlow {
		t.shared = captured.NewShared()
	}
	for _, s := range set.Summary {
		t.BusyNS += s.BusyNS
	}
	n := len(set.Signatures)
	subAt, subbed, err := substitutions(set, o.Substitute)
	if err != nil {
		return nil, err
	}
	again, err := agains(set, o.Again, o.AgainTimes, o.AgainAfter, subbed)
	if err != nil {
		return nil, err
	}
	count := make([]int, n)
	for i, inv := range set.Timeline {
		if inv.Sig < 0 || inv.Sig >= n {
			return nil, fmt.Errorf("timeline: invocation names signature %d of %d", inv.Sig, n)
		}
		t.TracedNS += inv.Dur
		if subbed[i] {
			t.Substituted++
			t.SubstitutedNS += inv.Dur
			continue
		}
		count[inv.Sig]++
	}
	for _, sub := range o.Substitute {
		if sub.With != nil && !slices.Contains(t.subs, sub.With) {
			t.subs = append(t.subs, sub.With)
		}
	}
	var free0, total int
	if err := d.Do(func() error {
		var err error
		free0, total, err = cuda.MemGetInfo()
		return err
	}); err != nil {
		return nil, err
	}

	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	byIndex, reasons, err := t.prepareAll(count, o, free0, total)
	if err != nil {
		return nil, err
	}
	// The buffers must leave room for the graph and the libraries.
	if err := d.Do(func() error {
		free, _, err := cuda.MemGetInfo()
		if err != nil {
			return err
		}
		if int64(free) < o.Reserve {
			return fmt.Errorf("%w: %d prepared signatures take %d bytes, %d bytes left free of %d, want %d",
				ErrTimelineMemory, len(t.Prepared), t.BufferBytes, free, total, o.Reserve)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	order := t.plan(byIndex, reasons, subAt, subbed, again)
	if len(order) == 0 {
		return nil, errors.New("timeline: no invocation can be replayed")
	}
	t.order = order
	if t.shared != nil {
		if err := t.stepDataFlow(order); err != nil {
			return nil, err
		}
	}
	if err := d.Do(func() error { return t.capture(order) }); err != nil {
		return nil, fmt.Errorf("timeline: capturing %d launches in a graph: %w", len(order), err)
	}
	ok = true
	return t, nil
}

// substitutions checks subs against set's timeline and returns the
// substitute to launch at each run's first invocation and which
// invocations are substituted.
func substitutions(set *signatures.Set, subs []Substitution) (map[int]*Prepared, []bool, error) {
	at := map[int]*Prepared{}
	subbed := make([]bool, len(set.Timeline))
	for k, sub := range subs {
		switch {
		case len(sub.Invocations) == 0:
			return nil, nil, fmt.Errorf("timeline: substitution %d replaces no invocation", k)
		case sub.With == nil:
			// The run removed: nothing launches in its place.
		case sub.With.Kernel == nil:
			return nil, nil, fmt.Errorf("timeline: substitution %d has no prepared kernel", k)
		case !sub.With.Kernel.Capturable():
			return nil, nil, fmt.Errorf("timeline: substitution %d: %s cannot be captured in a CUDA graph", k, sub.With.Sig.ID)
		}
		prev := -1
		for _, i := range sub.Invocations {
			switch {
			case i < 0 || i >= len(set.Timeline):
				return nil, nil, fmt.Errorf("timeline: substitution %d names invocation %d of %d", k, i, len(set.Timeline))
			case i <= prev:
				return nil, nil, fmt.Errorf("timeline: substitution %d: invocations %d then %d, not increasing", k, prev, i)
			case subbed[i]:
				return nil, nil, fmt.Errorf("timeline: substitution %d: invocation %d is in another substitution", k, i)
			}
			subbed[i], prev = true, i
		}
		at[sub.Invocations[0]] = sub.With
	}
	return at, subbed, nil
}

// agains checks runs against set's timeline and the substituted
// invocations, and returns each run repeated times times (0: once) by the
// invocation to launch it after: its last, or after[k] for run k.
func agains(set *signatures.Set, runs [][]int, times int, after []int, subbed []bool) (map[int][]int, error) {
	switch {
	case times < 0:
		return nil, fmt.Errorf("timeline: AgainTimes %d: want 0 or more", times)
	case after != nil && len(after) != len(runs):
		return nil, fmt.Errorf("timeline: AgainAfter has %d invocations for %d runs", len(after), len(runs))
	}
	at := map[int][]int{}
	seen := make([]bool, len(set.Timeline))
	for k, run := range runs {
		if len(run) == 0 {
			return nil, fmt.Errorf("timeline: run %d to launch again is empty", k)
		}
		prev := -1
		for _, i := range run {
			switch {
			case i < 0 || i >= len(set.Timeline):
				return nil, fmt.Errorf("timeline: run %d to launch again names invocation %d of %d", k, i, len(set.Timeline))
			case i <= prev:
				return nil, fmt.Errorf("timeline: run %d to launch again: invocations %d then %d, not increasing", k, prev, i)
			case subbed[i]:
				return nil, fmt.Errorf("timeline: run %d to launch again: invocation %d is substituted", k, i)
			case seen[i]:
				return nil, fmt.Errorf("timeline: run %d to launch again: invocation %d is in another run", k, i)
			}
			seen[i], prev = true, i
		}
		where := run[len(run)-1]
		if after != nil {
			if a := after[k]; a < where || a >= len(set.Timeline) {
				return nil, fmt.Errorf("timeline: run %d to launch again after invocation %d: want %d to %d", k, a, where, len(set.Timeline)-1)
			}
			where = after[k]
		}
		for range max(times, 1) {
			at[where] = append(at[where], run...)
		}
	}
	return at, nil
}

// prepareAll prepares every signature with invocations to launch (count)
// that can replay, in the Warm cache mode, and returns them by signature
// index with the reasons the others are skipped.
func (t *Timeline) prepareAll(count []int, o TimelineOptions, free0, total int) ([]*Prepared, []string, error) {
	d, set := t.dev, t.Set
	byIndex := make([]*Prepared, len(count))
	reasons := make([]string, len(count))
	for i, sig := range set.Signatures {
		if count[i] == 0 || sig.PartOf != "" {
			continue
		}
		reason := skipReason(sig, o)
		if reason == "" {
			p, err := d.prepareFor(sig, Warm, nil, t.shared)
			switch {
			case err != nil && isMemoryError(err):
				return nil, nil, fmt.Errorf("%w: signature %s (%s) does not fit after %d prepared signatures take %d bytes (%d of %d bytes were free before): %v",
					ErrTimelineMemory, sig.ID, sig.Label, len(t.Prepared), t.BufferBytes+t.shared.Bytes(), free0, total, err)
			case err != nil:
				reason = err.Error()
				if se := (*SignatureError)(nil); errors.As(err, &se) {
					reason = se.Err.Error()
				}
			case !p.Kernel.Capturable():
				reason = "cannot be captured in a CUDA graph"
				p.Close()
			case o.NoApproximate && p.Approximate != "":
				reason = "approximate: " + p.Approximate
				p.Close()
			default:
				byIndex[i] = p
				t.Prepared = append(t.Prepared, p)
				if t.shared == nil || p.Path != PathCaptured {
					t.BufferBytes += p.Kernel.Footprint() * int64(p.Kernel.Sets())
				}
			}
		}
		reasons[i] = reason
	}
	if t.shared != nil {
		t.SharedBuffers, t.SharedBytes = t.shared.Buffers(), t.shared.Bytes()
		t.BufferBytes += t.SharedBytes
		err := d.Do(func() (err error) {
			t.SharedBefore, err = t.shared.Census(censusLimit, d.stream)
			return err
		})
		if err != nil {
			t.SharedErr = "once prepared: " + err.Error()
		}
	}
	return byIndex, reasons, nil
}

// plan orders the graph's launches: each invocation's prepared signature
// in timeline order, a substitute in place of its run, parts left to
// their parent, a run to launch again (again, by its last invocation)
// once more after it; it counts and lists what is skipped.
func (t *Timeline) plan(byIndex []*Prepared, reasons []string, subAt map[int]*Prepared, subbed []bool, again map[int][]int) []*Prepared {
	set := t.Set
	skips := map[int]*TimelineSkip{}
	skip := func(i int, reason string, inv signatures.Invocation) {
		sk := skips[i]
		if sk == nil {
			sig := set.Signatures[i]
			sk = &TimelineSkip{ID: sig.ID, Label: sig.Label, Reason: reason}
			skips[i] = sk
		}
		sk.Invocations++
		sk.TracedNS += inv.Dur
	}
	var order []*Prepared
	t.orderInv = nil
	place := func(idx int, inv signatures.Invocation) {
		if subbed[idx] {
			if p := subAt[idx]; p != nil {
				order, t.orderInv = append(order, p), append(t.orderInv, idx)
			}
			return
		}
		sig := set.Signatures[inv.Sig]
		if sig.PartOf != "" {
			t.Parts++
			parent := set.ByID(sig.PartOf)
			if parent == nil || parent == sig {
				t.SkippedNS += inv.Dur
				skip(inv.Sig, "part of "+sig.PartOf+", which is not in the set", inv)
				return
			}
			if pi := slices.Index(set.Signatures, parent); byIndex[pi] == nil {
				t.SkippedNS += inv.Dur
				skip(inv.Sig, "part of "+sig.PartOf+", which is skipped", inv)
			}
			return
		}
		if p := byIndex[inv.Sig]; p != nil {
			order, t.orderInv = append(order, p), append(t.orderInv, idx)
			return
		}
		t.Skipped++
		t.SkippedNS += inv.Dur
		skip(inv.Sig, reasons[inv.Sig], inv)
	}
	for idx, inv := range set.Timeline {
		place(idx, inv)
		for _, j := range again[idx] {
			if p := byIndex[set.Timeline[j].Sig]; p != nil {
				order, t.Again = append(order, p), t.Again+1
				t.orderInv = append(t.orderInv, -1)
			}
		}
	}
	t.Launched = len(order)
	for _, sk := range skips {
		t.Skips = append(t.Skips, *sk)
	}
	slices.SortFunc(t.Skips, func(a, b TimelineSkip) int {
		return cmp.Or(cmp.Compare(b.TracedNS, a.TracedNS), strings.Compare(a.ID, b.ID))
	})
	return order
}

// skipReason says why a signature is not prepared for the timeline, or "".
func skipReason(sig *signatures.Signature, o TimelineOptions) string {
	reason, skip := o.Skip[sig.ID]
	switch {
	case skip:
		return cmp.Or(reason, "left out")
	case sig.Unreplayable != "":
		return "unreplayable: " + sig.Unreplayable
	case sig.Class == signatures.ClassCollective:
		return "collective: needs the other ranks"
	case len(o.Tiers) > 0 && !slices.Contains(o.Tiers, sig.Tier):
		return fmt.Sprintf("tier %d not asked for", sig.Tier)
	}
	return ""
}

// isMemoryError reports whether a preparation failed for lack of device
// memory: a tier's own check or the driver's out-of-memory error.
func isMemoryError(err error) bool {
	if cuda.IsCode(err, cuda.CodeOutOfMemory) {
		return true
	}
	var se *SignatureError
	if errors.As(err, &se) {
		err = se.Err
	}
	return err != nil && strings.Contains(err.Error(), "bytes of device memory") && strings.Contains(err.Error(), "available")
}

// capture builds the timeline's graph: every invocation in order, each
// signature on its one buffer set. Call inside Do.
func (t *Timeline) capture(order []*Prepared) error {
	s := t.dev.stream
	var err error
	t.graph, err = captureGraph(s, func() error {
		for _, p := range order {
			if err := p.Kernel.Launch(s, 0); err != nil {
				return sigErr(p.Sig, "capture", err)
			}
		}
		return nil
	})
	return err
}

// Close frees the graph and every prepared signature's buffers (not the
// substitutes', which their caller prepared).
func (t *Timeline) Close() error {
	var errs []error
	if t.graph != nil {
		g := t.graph
		t.graph = nil
		errs = append(errs, t.dev.Do(g.Destroy))
	}
	for _, p := range t.Prepared {
		errs = append(errs, p.Close())
	}
	t.Prepared = nil
	if sh := t.shared; sh != nil {
		t.shared = nil
		errs = append(errs, t.dev.Do(sh.Close))
	}
	return errors.Join(errs...)
}

// TimelineResult is the measurement of a whole timeline. Times are per
// timeline (one launch of its graph), in nanoseconds.
type TimelineResult struct {
	Workload string `json:"workload"`
	// Invocations is the invocations one timeline launches; Skipped and
	// SkippedNS the invocations not replayed and their traced time;
	// Parts the invocations run inside their parent's (see Timeline).
	Invocations int   `json:"invocations"`
	Skipped     int   `json:"skipped"`
	SkippedNS   int64 `json:"skipped_ns"`
	Parts       int   `json:"parts"`
	// Skips lists the skipped signatures (see Timeline.Skips).
	Skips []TimelineSkip `json:"skips,omitempty"`
	// Substituted and SubstitutedNS count the invocations replaced by
	// substitutes and their traced time (see Timeline).
	Substituted   int   `json:"substituted,omitempty"`
	SubstitutedNS int64 `json:"substituted_ns,omitempty"`
	// SharedBuffers is, for a timeline of the recorded data flow
	// (TimelineOptions.DataFlow), the allocations its captured binaries
	// share; 0 otherwise.
	SharedBuffers int `json:"shared_buffers,omitempty"`
	// SharedBefore and SharedAfter are, on the recorded data flow, what
	// the shared buffers held before the graph's first launch and after
	// the samples (captured.Census): whether the values the replays
	// compute on drift from real data. SharedErr says why not read.
	SharedBefore *captured.Census `json:"shared_before,omitempty"`
	SharedAfter  *captured.Census `json:"shared_after,omitempty"`
	SharedErr    string           `json:"shared_error,omitempty"`
	// TracedNS and BusyNS are the trace's summed durations and GPU-busy
	// time (see Timeline).
	TracedNS int64 `json:"traced_ns"`
	BusyNS   int64 `json:"busy_ns"`
	Samples  int   `json:"samples"`

	// Stats are of one timeline's time, with the given confidence;
	// Converged is true when RelCI is within Options.TargetRelCI.
	Stats
	Confidence float64 `json:"confidence"`
	Converged  bool    `json:"converged"`

	// GapNS is the idle gap after each launch (TimelineOptions.Gap).
	GapNS int64 `json:"gap_ns,omitempty"`
	// Energy is the energy of one launch and its gap, measured over a
	// window of launches each followed by the gap, when Options.Energy
	// asked for it: the whole inference's energy, kernels in their order
	// under the power limiter, and the idle gap. EnergyErr says why not.
	Energy    *Energy `json:"energy,omitempty"`
	EnergyErr string  `json:"energy_error,omitempty"`
	// GPU state sampled through NVML during the samples; nil without NVML.
	GPU       *energy.Summary `json:"gpu,omitempty"`
	Throttled bool            `json:"throttled"`
	Reasons   string          `json:"throttle_reasons,omitempty"`
	// SamplerErr says why NVML's sampler read no GPU state during the
	// samples although a meter was there (see Result.SamplerErr).
	SamplerErr string `json:"sampler_error,omitempty"`
	// ThrottledSamples counts the samples that overlap a throttled NVML
	// state (see Result.ThrottledSamples). Unlike a signature's, they are
	// kept in the statistics: the timeline replays the whole inference,
	// whose real run the power limiter caps the same way.
	ThrottledSamples int `json:"throttled_samples,omitempty"`
	// Launches is the timed launches in order, each with the SM clock
	// and power NVML read while it ran (see LaunchSample).
	Launches []LaunchSample `json:"launches,omitempty"`

	// Context is each replayed signature's time in context: the kernel
	// time of its invocations within the timeline replay, each preceded
	// by what the trace ran before it (see InContext). ContextErr says why
	// there is none.
	Context    []SigContext `json:"context,omitempty"`
	ContextErr string       `json:"context_error,omitempty"`
	// Gaps is where a launch's time went in those same launches: the
	// activities' busy time and the idle gaps the graph left between
	// them; nil without kernel times.
	Gaps *TimelineGaps `json:"gaps,omitempty"`
}

// String formats a timeline result on one line.
func (r *TimelineResult) String() string {
	s := fmt.Sprintf("timeline %s: median %.1fµs ±%.1f%% (%d samples), %d invocations, %d skipped (%.1fµs traced); trace busy %.1fµs",
		r.Workload, r.MedianNS/1e3, 100*r.RelCI, r.Samples, r.Invocations, r.Skipped, float64(r.SkippedNS)/1e3, float64(r.BusyNS)/1e3)
	if r.Substituted > 0 {
		s += fmt.Sprintf("; %d invocations substituted (%.1fµs traced)", r.Substituted, float64(r.SubstitutedNS)/1e3)
	}
	if r.SharedBuffers > 0 {
		s += fmt.Sprintf("; the recorded data flow: %d allocations shared", r.SharedBuffers)
		if r.SharedBefore != nil && r.SharedAfter != nil {
			s += fmt.Sprintf(" (before: %s; after: %s)", r.SharedBefore, r.SharedAfter)
		}
		if r.SharedErr != "" {
			s += " (values not read: " + r.SharedErr + ")"
		}
	}
	if r.Throttled {
		s += " THROTTLED " + r.Reasons
	}
	if n := throttleNote(r.ThrottledSamples, r.Samples, true); n != "" {
		s += ", " + n
	}
	if r.SamplerErr != "" {
		s += "; throttling unchecked: " + r.SamplerErr
	}
	if g := r.Gaps; g != nil {
		s += fmt.Sprintf("; under CUPTI a launch spans %.1fµs: %d activities busy %.1fµs, %d gaps %.1fµs (median %.2fµs)",
			g.SpanNS/1e3, g.Activities, g.BusyNS/1e3, g.Gaps, g.GapNS/1e3, g.MedianGapNS/1e3)
	}
	return s
}

// Measure times the timeline: after the pause and a warm-up of graph
// launches, samples of one graph launch each, timed with CUDA events,
// until the confidence interval of the median reaches o.TargetRelCI or
// the budget ends, each sample followed by the timeline's gap; then, with
// o.Energy, its energy (TimelineResult.Energy). Options that concern
// batches and CUPTI do not apply. It fails where the CUDA context is
// lost (cuda.IsSticky) while it measures, a kernel that failed in the
// samples included, and keeps no times then.
func (t *Timeline) Measure(o Options) (*TimelineResult, error) {
	if t.graph == nil {
		return nil, errors.New("timeline: closed")
	}
	o.defaults()
	r := &TimelineResult{
		Workload: t.Set.Source.Workload, Invocations: t.Launched, Skipped: t.Skipped, SkippedNS: t.SkippedNS,
		Parts: t.Parts, Skips: slices.Clone(t.Skips), Substituted: t.Substituted, SubstitutedNS: t.SubstitutedNS,
		TracedNS: t.TracedNS, BusyNS: t.BusyNS, Confidence: o.Confidence,
		GapNS: t.gap.Nanoseconds(), SharedBuffers: t.SharedBuffers,
	}
	if err := t.dev.Do(func() error { return t.measure(o, r) }); err != nil {
		return nil, fmt.Errorf("timeline: measure: %w", err)
	}
	if t.shared != nil {
		t.census(r)
	}
	return r, nil
}

// censusLimit bounds the bytes a census reads of each shared buffer.
const censusLimit = 256 << 20

// census reads what the shared buffers hold after the samples into r,
// beside what they held once prepared.
func (t *Timeline) census(r *TimelineResult) {
	if t.SharedErr != "" {
		r.SharedErr = t.SharedErr
		return
	}
	before := t.SharedBefore
	err := t.dev.Do(func() error {
		after, err := t.shared.Census(censusLimit, t.dev.stream)
		r.SharedAfter = &after
		return err
	})
	if err != nil {
		r.SharedAfter, r.SharedErr = nil, "after the samples: "+err.Error()
		return
	}
	r.SharedBefore = &before
}

func (t *Timeline) measure(o Options, r *TimelineResult) error {
	d := t.dev
	s := d.stream
	ev, err := newEvents()
	if err != nil {
		return err
	}
	defer ev.close()
	// timed times one launch of the graph; gap then idles for the
	// timeline's gap.
	timed := func() (time.Duration, error) {
		return ev.around(s, func() error { return t.graph.Launch(s) }, nil)
	}
	gap := func() error {
		if t.gap > 0 {
			return withGap(func() error { return nil }, t.gap)()
		}
		return nil
	}
	sample := func() (time.Duration, error) {
		el, err := timed()
		if err == nil {
			err = gap()
		}
		return el, err
	}

	if o.Pause > 0 {
		time.Sleep(o.Pause)
	}
	// Warm-up: at least two launches, and until the warm-up time is spent.
	warmEnd := time.Now().Add(o.Warmup)
	for i := 0; i < 2 || time.Now().Before(warmEnd); i++ {
		if _, err := sample(); err != nil {
			return err
		}
	}

	var sampler *energy.Sampler
	var startErr string
	if d.Meter != nil && !o.NoNVML {
		sampler, startErr = startSampler(d.Meter)
	}
	// A sample's span ends before its gap: the idle gap is not the
	// launch's, whatever NVML reads then.
	var ends []time.Time
	sam, err := sampleToTarget(o, func() (float64, error) {
		el, err := timed()
		ends = append(ends, time.Now())
		if err == nil {
			err = gap()
		}
		return float64(el.Nanoseconds()), err
	}, nil)
	states, stopErr := stopSampler(sampler, d.Meter)
	if err != nil {
		return err
	}
	r.SamplerErr = joinSamplerErr(startErr, stopErr)
	for i := range sam.spans {
		sam.spans[i].end = ends[i]
	}
	r.GPU, r.Throttled, r.Reasons = gpuSummary(states)
	if sampler != nil {
		for _, th := range throttledSamples(sam.spans, states) {
			if th {
				r.ThrottledSamples++
			}
		}
	}
	values := sam.values
	r.Launches = launchSeries(values, sam.spans, states)
	r.Stats = statsOf(values, o.Confidence)
	r.Converged = r.RelCI <= o.TargetRelCI
	r.Samples = len(values)
	if !o.NoKernelTime {
		if r.Context, r.Gaps, err = t.inContext(contextPasses); err != nil {
			r.ContextErr = err.Error()
		}
	}
	if o.Energy {
		if r.Energy, err = t.measureEnergy(o); err != nil {
			r.EnergyErr = err.Error()
		}
	}
	// A lost context (a kernel that failed in the samples, which their
	// events need not return, or in the steps after them) fails the
	// measurement: every call returns its error from then on.
	if err := s.Synchronize(); err != nil {
		return fmt.Errorf("the CUDA context was lost while measuring the timeline (kernel count: %q; energy: %q): %w", r.ContextErr, r.EnergyErr, err)
	}
	return nil
}

// measureEnergy measures the energy of one launch of the timeline and its
// gap over a window of whole NVML counter ticks.
func (t *Timeline) measureEnergy(o Options) (*Energy, error) {
	d := t.dev
	if d.Meter == nil {
		return nil, fmt.Errorf("%w: %v", ErrNoMeter, d.NVMLErr)
	}
	s := d.stream
	work := withGap(func() error {
		if err := t.graph.Launch(s); err != nil {
			return err
		}
		return s.Synchronize()
	}, t.gap)
	rd, err := d.energyWindow(work, o)
	if err != nil {
		return nil, err
	}
	e := energyOf(rd, 1)
	return &e, nil
}
