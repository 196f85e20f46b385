// Command removedprobe times, alternately for some rounds, a trace's
// timeline as traced (plain), with each run of a what-if's replaced ops
// removed (nothing in their place: replay.Substitution with no kernel),
// with each run launched once more right after itself (again, as kreplay
// whatif -again does), and with each run launched once more midway to the
// next run (apart: replay.TimelineOptions.AgainAfter), and prints each
// one's sustained time, NVML clock and energy.
// A probe of how the power cap's clock answers to the count of those
// runs, from none to two (results/h100/roofline-whatif/): it predicts
// nothing.
//
//	removedprobe [-replace llama-rmsnorm] [-rounds 9] [-ticks 11] [-o FILE.json] embedded:NAME|BUNDLE
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/whatif"
	"github.com/kreplay/kreplay/workload"
)

// timing is one timeline's timings, one per round.
type timing struct {
	Name   string                   `json:"name"`
	Rounds []*replay.TimelineResult `json:"rounds"`
	tl     *replay.Timeline
}

func main() {
	replace := flag.String("replace", "llama-rmsnorm", "the what-if's replaced `OPS` or recipe")
	rounds := flag.Int("rounds", 9, "rounds")
	ticks := flag.Int("ticks", 11, "NVML energy ticks in the last round")
	out := flag.String("o", "", "write every timing as JSON to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 {
		fail(fmt.Errorf("usage: removedprobe [flags] embedded:NAME|BUNDLE"))
	}
	set, err := load(flag.Arg(0))
	fail(err)
	steps, err := whatif.ParseReplace(*replace)
	fail(err)
	m, err := whatif.Find(set, steps)
	fail(err)
	var removed []replay.Substitution
	var runs [][]int
	for _, r := range m.Runs {
		removed = append(removed, replay.Substitution{Invocations: r.Invocations})
		runs = append(runs, r.Invocations)
	}
	slices.SortFunc(runs, func(a, b []int) int { return a[0] - b[0] })
	fmt.Printf("%s: %d runs of %s\n", set.Source.Workload, len(runs), strings.Join(steps, ","))
	d, err := replay.Open(0)
	fail(err)
	defer d.Close()
	ts := []*timing{{Name: "plain"}, {Name: "removed"}, {Name: "again"}, {Name: "apart"}}
	for i, o := range []replay.TimelineOptions{{}, {Substitute: removed}, {Again: runs}, {Again: runs, AgainAfter: midway(runs, len(set.Timeline))}} {
		ts[i].tl, err = d.PrepareTimeline(set, o)
		fail(err)
		defer ts[i].tl.Close()
		fmt.Printf("%s: %d launches\n", ts[i].Name, ts[i].tl.Launched)
	}
	for r := range *rounds {
		last := r == *rounds-1
		o := replay.Options{Budget: 3 * time.Second, TargetRelCI: 0.002, NoKernelTime: true, Energy: last, EnergyTicks: *ticks}
		for _, t := range ts {
			res, err := t.tl.Measure(o)
			fail(err)
			t.Rounds = append(t.Rounds, res)
		}
	}
	for _, t := range ts {
		report(t)
	}
	if *out != "" {
		b, err := json.Marshal(ts)
		fail(err)
		fail(os.WriteFile(*out, b, 0o644))
	}
}

// midway gives each run's place to launch again: halfway from its last
// invocation to the next run's first (the timeline's end for the last).
// runs are in timeline order.
func midway(runs [][]int, n int) []int {
	after := make([]int, len(runs))
	for k, r := range runs {
		last, next := r[len(r)-1], n
		if k+1 < len(runs) {
			next = runs[k+1][0]
		}
		after[k] = last + (next-1-last)/2
	}
	return after
}

// report prints a timeline's medians and means over the rounds, its
// mean NVML clock and the last round's energy.
func report(t *timing) {
	var med, mean, mhz float64
	for _, r := range t.Rounds {
		med, mean = med+r.MedianNS, mean+r.MeanNS
		if r.GPU != nil {
			mhz += r.GPU.MeanSMClockMHz
		}
	}
	n := float64(len(t.Rounds))
	line := fmt.Sprintf("%-8s median %.3f ms, sustained %.3f ms, %.0f MHz", t.Name, med/n/1e6, mean/n/1e6, mhz/n)
	if e := t.Rounds[len(t.Rounds)-1].Energy; e != nil {
		line += fmt.Sprintf(", %.3f J per launch at %.1f W (throttled %v)", e.JoulesPerOp, e.Watts, e.Throttled)
	}
	fmt.Println(line)
}

// load reads an embedded bundle (embedded:NAME) or a bundle directory and
// returns its one set.
func load(arg string) (*signatures.Set, error) {
	var b *workload.Bundle
	var err error
	if name, ok := strings.CutPrefix(arg, "embedded:"); ok {
		fsys, ferr := traces.Bundle(name)
		if ferr != nil {
			return nil, ferr
		}
		b, err = workload.OpenBundle(fsys, arg)
	} else {
		b, err = workload.ReadBundle(arg)
	}
	if err != nil {
		return nil, err
	}
	sets, err := b.Sets()
	if err != nil {
		return nil, err
	}
	if len(sets) != 1 {
		return nil, fmt.Errorf("%s: %d sets, want one", arg, len(sets))
	}
	return sets[0], nil
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "removedprobe:", err)
		os.Exit(1)
	}
}
