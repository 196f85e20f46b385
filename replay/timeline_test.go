package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/errtest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

func TestTimelineSkipReason(t *testing.T) {
	for _, c := range []struct {
		sig  signatures.Signature
		o    TimelineOptions
		want string
	}{
		{signatures.Signature{Tier: 1}, TimelineOptions{}, ""},
		{signatures.Signature{Tier: 2, Unreplayable: "no shapes"}, TimelineOptions{}, "unreplayable: no shapes"},
		{signatures.Signature{Tier: 2, Class: signatures.ClassCollective}, TimelineOptions{}, "collective: needs the other ranks"},
		{signatures.Signature{Tier: 3}, TimelineOptions{Tiers: []signatures.Tier{1, 2}}, "tier 3 not asked for"},
		{signatures.Signature{Tier: 2}, TimelineOptions{Tiers: []signatures.Tier{1, 2}}, ""},
		{signatures.Signature{ID: "s1", Tier: 2, Unreplayable: "x"}, TimelineOptions{Skip: map[string]string{"s1": "left out"}}, "left out"},
		{signatures.Signature{ID: "s1", Tier: 1}, TimelineOptions{Skip: map[string]string{"s1": ""}}, "left out"},
		{signatures.Signature{ID: "s2", Tier: 1}, TimelineOptions{Skip: map[string]string{"s1": "left out"}}, ""},
	} {
		if got := skipReason(&c.sig, c.o); got != c.want {
			t.Errorf("skipReason(%+v, %+v) = %q, want %q", c.sig, c.o, got, c.want)
		}
	}
}

func TestTimelineMemoryError(t *testing.T) {
	sig := &signatures.Signature{ID: "s1", Label: "l"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{sigErr(sig, "prepare", &cuda.Error{Call: "cuMemAlloc", Code: cuda.CodeOutOfMemory}), true},
		{sigErr(sig, "prepare", fmt.Errorf("needs %d bytes of device memory for %d buffer sets, %d available", 10, 1, 5)), true},
		{sigErr(sig, "prepare", ErrNotImplemented), false},
		{errors.New("other"), false},
	} {
		if got := isMemoryError(c.err); got != c.want {
			t.Errorf("isMemoryError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// fakeKernel is a launch.Kernel that launches nothing, for planning
// tests without a GPU.
type fakeKernel struct{ capturable bool }

func (fakeKernel) Launch(*cuda.Stream, int) error { return nil }
func (fakeKernel) Sets() int                      { return 1 }
func (fakeKernel) Footprint() int64               { return 0 }
func (fakeKernel) Work() launch.Work              { return launch.Work{} }
func (k fakeKernel) Capturable() bool             { return k.capturable }
func (fakeKernel) Close() error                   { return nil }

// Substitutions are checked against the timeline: a run of increasing
// invocations in range, in no other run, with a capturable kernel.
func TestTimelineSubstitutions(t *testing.T) {
	set := &signatures.Set{Timeline: make(signatures.Timeline, 6)}
	with := &Prepared{Sig: &signatures.Signature{ID: "f"}, Kernel: fakeKernel{capturable: true}}
	for _, c := range []struct {
		name string
		subs []Substitution
		err  string
		at   []int
		nsub int // invocations substituted
	}{
		{"none", nil, "", nil, 0},
		{"two runs", []Substitution{{[]int{1, 2}, with}, {[]int{4, 5}, with}}, "", []int{1, 4}, 4},
		{"removed", []Substitution{{[]int{1, 2}, nil}, {[]int{4}, with}}, "", []int{4}, 3},
		{"empty", []Substitution{{nil, with}}, "replaces no invocation", nil, 0},
		{"no kernel", []Substitution{{[]int{1}, &Prepared{Sig: with.Sig}}}, "no prepared kernel", nil, 0},
		{"not capturable", []Substitution{{[]int{1}, &Prepared{Sig: with.Sig, Kernel: fakeKernel{}}}}, "cannot be captured", nil, 0},
		{"out of range", []Substitution{{[]int{5, 6}, with}}, "invocation 6 of 6", nil, 0},
		{"not increasing", []Substitution{{[]int{2, 1}, with}}, "not increasing", nil, 0},
		{"overlap", []Substitution{{[]int{1, 2}, with}, {[]int{2, 3}, with}}, "in another substitution", nil, 0},
	} {
		at, subbed, err := substitutions(set, c.subs)
		if !errtest.Check(t, c.name, err, c.err) {
			continue
		}
		var got []int
		n := 0
		for i, sub := range subbed {
			if at[i] != nil {
				got = append(got, i)
			}
			if sub {
				n++
			}
		}
		if !slices.Equal(got, c.at) || n != c.nsub {
			t.Errorf("%s: substitutes at %v, %d substituted; want %v, %d", c.name, got, n, c.at, c.nsub)
		}
	}
}

// plan launches a substitute once in place of its run, skips the run's
// other invocations and its parts, and counts the rest as before.
func TestTimelinePlanSubstitute(t *testing.T) {
	sigs := []*signatures.Signature{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "m", PartOf: "a"}, {ID: "x"}}
	set := &signatures.Set{Signatures: sigs}
	for _, s := range []int{0, 1, 3, 2, 0, 1, 2, 4} {
		set.Timeline = append(set.Timeline, signatures.Invocation{Sig: s, Dur: 10})
	}
	pa, pb, pc := &Prepared{Sig: sigs[0]}, &Prepared{Sig: sigs[1]}, &Prepared{Sig: sigs[2]}
	fused := &Prepared{Sig: &signatures.Signature{ID: "fused"}, Kernel: fakeKernel{capturable: true}}
	// b, m, c of the first run and b, c of the second are replaced.
	at, subbed, err := substitutions(set, []Substitution{{[]int{1, 2, 3}, fused}, {[]int{5, 6}, fused}})
	if err != nil {
		t.Fatal(err)
	}
	tl := &Timeline{Set: set}
	order := tl.plan([]*Prepared{pa, pb, pc, nil, nil}, []string{"", "", "", "", "no kernel"}, at, subbed, nil)
	want := []*Prepared{pa, fused, pa, fused}
	if !slices.Equal(order, want) {
		var ids []string
		for _, p := range order {
			ids = append(ids, p.Sig.ID)
		}
		t.Errorf("order %v, want a fused a fused", ids)
	}
	if tl.Launched != 4 || tl.Skipped != 1 || tl.SkippedNS != 10 || tl.Parts != 0 || len(tl.Skips) != 1 || tl.Skips[0].ID != "x" {
		t.Errorf("launched %d, skipped %d (%d ns), parts %d, skips %+v", tl.Launched, tl.Skipped, tl.SkippedNS, tl.Parts, tl.Skips)
	}
}

// plan launches a run to launch again once more right after its last
// invocation, its parts left to their parent, and counts those launches.
func TestTimelinePlanAgain(t *testing.T) {
	sigs := []*signatures.Signature{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "m", PartOf: "b"}}
	set := &signatures.Set{Signatures: sigs}
	for _, s := range []int{0, 1, 3, 2, 0, 1, 2} {
		set.Timeline = append(set.Timeline, signatures.Invocation{Sig: s, Dur: 10})
	}
	pa, pb, pc := &Prepared{Sig: sigs[0]}, &Prepared{Sig: sigs[1]}, &Prepared{Sig: sigs[2]}
	for _, tc := range []struct {
		times int
		after []int
		want  string
	}{
		{0, nil, "a b c b c a b c b c"},
		{1, nil, "a b c b c a b c b c"},
		{2, nil, "a b c b c b c a b c b c b c"},
		{1, []int{4, 6}, "a b c a b c b c b c"},
	} {
		runs := [][]int{{1, 2, 3}, {5, 6}}
		again, err := agains(set, runs, tc.times, tc.after, make([]bool, len(set.Timeline)))
		if err != nil {
			t.Fatal(err)
		}
		tl := &Timeline{Set: set}
		order := tl.plan([]*Prepared{pa, pb, pc, nil}, []string{"", "", "", ""}, nil, make([]bool, len(set.Timeline)), again)
		var ids []string
		for _, p := range order {
			ids = append(ids, p.Sig.ID)
		}
		n := len(strings.Fields(tc.want))
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("times %d: order %s, want %s", tc.times, got, tc.want)
		}
		if tl.Launched != n || tl.Again != n-6 || tl.Parts != 1 || tl.Skipped != 0 {
			t.Errorf("times %d: launched %d, again %d, parts %d, skipped %d", tc.times, tl.Launched, tl.Again, tl.Parts, tl.Skipped)
		}
		if !slices.Equal(runs[0], []int{1, 2, 3}) || !slices.Equal(runs[1], []int{5, 6}) {
			t.Errorf("times %d: the runs given changed: %v", tc.times, runs)
		}
	}
}

// Runs to launch again are checked: increasing invocations in range, in
// no other run and none substituted.
func TestTimelineAgains(t *testing.T) {
	set := &signatures.Set{Timeline: make(signatures.Timeline, 6)}
	subbed := []bool{false, false, false, false, true, false}
	for _, c := range []struct {
		name  string
		runs  [][]int
		times int
		after []int
		err   string
	}{
		{"none", nil, 1, nil, ""},
		{"two runs", [][]int{{0, 1}, {2, 3}}, 1, nil, ""},
		{"two runs thrice", [][]int{{0, 1}, {2, 3}}, 3, nil, ""},
		{"negative times", [][]int{{0, 1}}, -1, nil, "AgainTimes -1"},
		{"after", [][]int{{0, 1}, {2, 3}}, 1, []int{1, 5}, ""},
		{"after both at one place", [][]int{{0, 1}, {2, 3}}, 1, []int{3, 3}, ""},
		{"after before the run", [][]int{{2, 3}}, 1, []int{2}, "want 3 to 5"},
		{"after out of range", [][]int{{2, 3}}, 1, []int{6}, "want 3 to 5"},
		{"after for some runs", [][]int{{0, 1}, {2, 3}}, 1, []int{4}, "1 invocations for 2 runs"},
		{"empty", [][]int{{}}, 1, nil, "is empty"},
		{"out of range", [][]int{{5, 6}}, 1, nil, "invocation 6 of 6"},
		{"not increasing", [][]int{{2, 1}}, 1, nil, "not increasing"},
		{"substituted", [][]int{{3, 4}}, 1, nil, "invocation 4 is substituted"},
		{"overlap", [][]int{{0, 1}, {1, 2}}, 1, nil, "in another run"},
	} {
		at, err := agains(set, c.runs, c.times, c.after, subbed)
		want, got := 0, 0
		for _, r := range c.runs {
			want += max(c.times, 1) * len(r)
		}
		for _, a := range at {
			got += len(a)
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && got != want:
			t.Errorf("%s: %d invocations to launch again, want %d", c.name, got, want)
		}
	}
}
