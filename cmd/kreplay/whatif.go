package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/whatif"
)

// whatifFlags are kreplay whatif's flags.
type whatifFlags struct {
	kernel, name, replace, grid, block, bench, out *string
	modes                                          *string
	shared                                         *uint
	eps, tol                                       *float64
	energy, noTimeline, again, removed             *bool
	ticks, rounds, device                          *int
	budget, settle                                 *time.Duration
}

func newWhatifFlags(fs *flag.FlagSet) *whatifFlags {
	return &whatifFlags{
		kernel: fs.String("kernel", "", "the what-if kernel: `FILE`.cu (CUDA C++, compiled with NVRTC on the GPU machine), or a .cubin, .fatbin or .ptx image;\nwithout it, only the runs of -replace are found and printed"),
		name:   fs.String("name", "", "the kernel's extern \"C\" function `NAME`"),
		replace: fs.String("replace", "", "the contiguous run of traced ops the kernel replaces: `OPS`, comma-separated aten ops (pow is aten::pow) or signature IDs,\nor a recipe: "+
			strings.Join(whatif.RecipeNames(), ", ")),
		grid:       fs.String("grid", "rows", "the kernel's grid: up to 3 `DIMS`, each N, rows or rows/N (one block per N rows)"),
		block:      fs.String("block", "256", "the kernel's block: up to 3 `SIZES`"),
		shared:     fs.Uint("shared", 0, "the kernel's dynamic shared memory in `BYTES`"),
		eps:        fs.Float64("eps", whatif.DefaultEps, "the norm's `EPS` where the trace does not record it (a guess: LlamaConfig's default; Llama-2 uses 1e-5)"),
		tol:        fs.Float64("tol", whatif.DefaultTolerance, "the output check's `TOLERANCE`, relative to the largest magnitude of the chain's output"),
		bench:      fs.String("bench", "", "kreplay predict's output `FILE.bench`: the predicted totals and the replaced signatures' times\n(default: the replaced signatures are replayed alone now, and there are no totals)"),
		energy:     fs.Bool("energy", false, "also measure energies with NVML: the kernel's and the replaced signatures' per launch, and the timelines'"),
		ticks:      fs.Int("ticks", 31, "NVML energy-counter `TICKS` per energy window (about 0.1 s each)"),
		budget:     fs.Duration("budget", 2*time.Second, "time `BUDGET` of each replay alone"),
		noTimeline: fs.Bool("no-timeline", false, "skip the timeline check (the trace replayed plain and with the kernel substituted)"),
		rounds:     fs.Int("rounds", 3, "time the plain and the substituted timelines `N` times each, alternately"),
		settle:     fs.Duration("settle", whatif.DefaultSettle, "launch each timeline for this `WARMUP` before each timing of it: at the power cap the limiter's clock\nsettles after the switch from the other timeline (each round's launches and clocks are in the JSON's rounds)"),
		device:     fs.Int("device", 0, "CUDA device `INDEX`"),
		out:        fs.String("o", "", "write the result as JSON to `FILE`"),
		again:      fs.Bool("again", false, "at the power cap: also time the plain timeline with the replaced runs launched twice, in each round, and predict\nfrom the two timelines and the Rotating replays alone (needs -energy)"),
		removed:    fs.Bool("removed", false, "at the power cap: also time the plain timeline with the replaced runs removed, in each round, and predict from\nthe plain and removed timelines and the Rotating replays alone (needs -energy; the prediction compared, before -again's)"),
		modes:      fs.String("probe-modes", "", "a probe: also replay the kernel and the replaced signatures alone in these cache `MODES` (comma-separated: rotating, warm, cold, primed)"),
	}
}

// cmdWhatIf is the fused-kernel what-if: on the CPU the runs the kernel
// replaces and its binding; on a GPU the output check, the prediction and
// the timeline check.
func cmdWhatIf(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("whatif", stderr)
	causalScoresFlag(fs)
	f := newWhatifFlags(fs)
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *f.replace == "" || (*f.kernel != "") != (*f.name != "") {
		fmt.Fprintln(stderr, "kreplay whatif: give -replace, and -kernel with -name")
		return errUsage
	}
	switch {
	case *f.again && !*f.energy:
		return fmt.Errorf("-again predicts from the timelines' energies: give -energy too")
	case *f.again && *f.noTimeline:
		return fmt.Errorf("-again predicts from the timeline check's runs: drop -no-timeline")
	case *f.removed && !*f.energy:
		return fmt.Errorf("-removed predicts from the timelines' energies: give -energy too")
	case *f.removed && *f.noTimeline:
		return fmt.Errorf("-removed predicts from the timeline check's runs: drop -no-timeline")
	}
	if *f.settle <= 0 {
		return fmt.Errorf("-settle %v: want a positive duration", *f.settle)
	}
	if *f.ticks < 2 || *f.rounds < 1 {
		return fmt.Errorf("-ticks %d, -rounds %d: want 2 or more ticks and a round or more", *f.ticks, *f.rounds)
	}
	modes, err := parseModes(*f.modes)
	if err != nil {
		return err
	}
	steps, err := whatif.ParseReplace(*f.replace)
	if err != nil {
		return err
	}
	set, _, err := load(pos[0])
	if err != nil {
		return err
	}
	m, err := whatif.Find(set, steps)
	if err != nil {
		return err
	}
	if err := m.WriteText(stdout); err != nil {
		return err
	}
	if len(m.Runs) == 0 {
		return fmt.Errorf("%s: no run of %s", pos[0], strings.Join(steps, ","))
	}
	if *f.kernel == "" {
		return nil
	}
	plan, err := whatifPlan(f, set, m)
	if err != nil {
		return err
	}
	if err := plan.WriteText(stdout); err != nil {
		return err
	}
	var base *whatif.Baseline
	if *f.bench != "" {
		if base, err = whatif.BaselineFromBench(*f.bench, set, m); err != nil {
			return err
		}
	}
	d, err := replay.Open(*f.device)
	if err != nil {
		fmt.Fprintf(stdout, "\nno usable GPU: %v\nThe CPU-only part ends here: on a GPU machine, whatif goes on to check the kernel's output against the\n"+
			"replaced ops, replay it, predict the new GPU time and check the prediction against the timeline replay.\n", err)
		return errNothingMeasured
	}
	d.Tier3 = tier3Config(fs)
	defer d.Close()
	measure := replay.Options{Budget: *f.budget, Energy: *f.energy, EnergyTicks: *f.ticks}
	r, err := whatif.Evaluate(d, plan, whatif.Options{Tolerance: *f.tol, Baseline: base, Measure: measure,
		NoTimeline: *f.noTimeline, Rounds: *f.rounds, Progress: stderr, Again: *f.again, Removed: *f.removed, Modes: modes,
		Timeline: replay.Options{Warmup: *f.settle}})
	if err != nil {
		return err
	}
	if err := r.WriteText(stdout); err != nil {
		return err
	}
	if *f.out != "" {
		if err := atomicfile.Write(*f.out, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(r)
		}); err != nil {
			return err
		}
	}
	if !r.OK() {
		return errors.New("the output check failed or could not run (see the report)")
	}
	return nil
}

// whatifPlan reads the kernel and its launch shape and binds it to the
// runs.
func whatifPlan(f *whatifFlags, set *signatures.Set, m *whatif.Match) (*whatif.Plan, error) {
	k, err := whatif.LoadKernel(*f.kernel, *f.name)
	if err != nil {
		return nil, err
	}
	if k.Grid, err = whatif.ParseGrid(*f.grid); err != nil {
		return nil, err
	}
	if k.Block, err = whatif.ParseBlock(*f.block); err != nil {
		return nil, err
	}
	if *f.shared > 227<<10 {
		return nil, fmt.Errorf("-shared %d: more than a GPU's 227 KiB", *f.shared)
	}
	k.Shared = uint32(*f.shared)
	return whatif.NewPlan(set, m, k, *f.eps)
}

// parseModes parses -probe-modes: comma-separated cache modes, "" none.
func parseModes(s string) ([]replay.CacheMode, error) {
	var modes []replay.CacheMode
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		m, err := replay.ParseCacheMode(f)
		if err != nil {
			return nil, fmt.Errorf("-probe-modes: %w", err)
		}
		modes = append(modes, m)
	}
	return modes, nil
}
