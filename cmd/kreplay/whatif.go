package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/whatif"
	"github.com/kreplay/kreplay/workload"
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
		kernel: fs.String("kernel", "", "the what-if `KERNEL`: FILE.cu (CUDA C++, compiled with NVRTC on the GPU machine), or a .cubin, .fatbin or .ptx image;\nwithout it, only the runs of -replace are found and printed"),
		name:   fs.String("name", "", "the kernel's extern \"C\" function `NAME`"),
		replace: fs.String("replace", "", "the contiguous run of traced ops the kernel replaces: `OPS`, comma-separated aten ops (pow is aten::pow) or signature IDs,\nor a recipe: "+
			strings.Join(whatif.RecipeNames(), ", ")),
		grid:       fs.String("grid", "rows", "the kernel's grid: up to 3 `DIMS`, each N, rows or rows/N (one block per N rows)"),
		block:      fs.String("block", "256", "the kernel's block: up to 3 `SIZES`"),
		shared:     fs.Uint("shared", 0, "the kernel's dynamic shared memory in `BYTES`"),
		eps:        fs.Float64("eps", whatif.DefaultEps, "the norm's `EPS` where the trace does not record it (a guess: LlamaConfig's default; Llama-2 uses 1e-5)"),
		tol:        fs.Float64("tol", whatif.DefaultTolerance, "the output check's `TOLERANCE`, relative to the largest magnitude of the chain's output"),
		bench:      fs.String("bench", "", "kreplay predict's output `BENCH`: the predicted totals and the replaced signatures' times\n(default: the replaced signatures are replayed alone now, and there are no totals)"),
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
	fs := newFlags("whatif")
	causalScoresFlag(fs)
	f := newWhatifFlags(fs)
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	v, err := f.validate()
	if err != nil {
		return err
	}
	modes, steps := v.modes, v.steps
	set, bundle, err := load(pos[0])
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
	plan, err := whatifPlan(f, v, set, m)
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
		fmt.Fprintln(stdout)
		return cpuPartEnds(stdout, err, "whatif", "check the kernel's output against the\n"+
			"replaced ops, replay it, predict the new GPU time and check the prediction against the timeline replay")
	}
	d.Tier3 = tier3Config(fs)
	defer d.Close()
	measure := replay.Options{Budget: *f.budget, Energy: *f.energy, EnergyTicks: *f.ticks}
	o := whatif.Options{Tolerance: *f.tol, Baseline: base, Measure: measure,
		NoTimeline: *f.noTimeline, Rounds: *f.rounds, Progress: stderr, Again: *f.again, Removed: *f.removed, Modes: modes,
		Timeline: replay.Options{Warmup: *f.settle}}
	o.ModelRun, o.NoModelRun = whatifModelRun(pos[0], bundle, set)
	r, err := whatif.Evaluate(d, plan, o)
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

// whatifModelRun is the input bundle's measured run, for the timeline
// design's energy rule, or why there is none (the input a trace, or the
// bundle without the run): not an error, the design says it.
func whatifModelRun(arg string, b *workload.Bundle, set *signatures.Set) (*whatif.ModelRun, string) {
	if b == nil {
		return nil, arg + " is a trace, not a bundle with a measured run"
	}
	run, err := whatif.ModelRunFromBundle(b, set)
	if err != nil {
		return nil, err.Error()
	}
	return run, ""
}

// whatifPlan reads the kernel and its launch shape and binds it to the
// runs.
func whatifPlan(f *whatifFlags, v *whatifValues, set *signatures.Set, m *whatif.Match) (*whatif.Plan, error) {
	k, err := whatif.LoadKernel(*f.kernel, *f.name)
	if err != nil {
		return nil, err
	}
	k.Grid, k.Block, k.Shared = v.grid, v.block, uint32(*f.shared)
	return whatif.NewPlan(set, m, k, *f.eps)
}

// whatifValues are the values of whatif's flags that are parsed from
// their text.
type whatifValues struct {
	steps []string
	modes []replay.CacheMode
	grid  [3]whatif.Dim
	block [3]uint32
}

// validate checks every flag's value and their combinations, and parses
// those that need it; what it rejects is a usage error.
func (f *whatifFlags) validate() (*whatifValues, error) {
	if *f.replace == "" || (*f.kernel != "") != (*f.name != "") {
		return nil, usagef("give -replace, and -kernel with -name")
	}
	switch {
	case *f.again && !*f.energy:
		return nil, usagef("-again predicts from the timelines' energies: give -energy too")
	case *f.again && *f.noTimeline:
		return nil, usagef("-again predicts from the timeline check's runs: drop -no-timeline")
	case *f.removed && !*f.energy:
		return nil, usagef("-removed predicts from the timelines' energies: give -energy too")
	case *f.removed && *f.noTimeline:
		return nil, usagef("-removed predicts from the timeline check's runs: drop -no-timeline")
	case *f.settle <= 0:
		return nil, usagef("-settle %v: want a positive duration", *f.settle)
	case *f.budget <= 0:
		return nil, usagef("-budget %v: want a positive duration", *f.budget)
	case *f.ticks < 2 || *f.rounds < 1:
		return nil, usagef("-ticks %d, -rounds %d: want 2 or more ticks and a round or more", *f.ticks, *f.rounds)
	case !(*f.eps > 0) || !(*f.tol > 0):
		return nil, usagef("-eps %g, -tol %g: want positive numbers", *f.eps, *f.tol)
	case *f.shared > 227<<10:
		return nil, usagef("-shared %d: more than a GPU's 227 KiB", *f.shared)
	case *f.device < 0:
		return nil, usagef("-device %d: want a device index, 0 or more", *f.device)
	}
	v := &whatifValues{}
	var err error
	if v.modes, err = parseModes(*f.modes); err != nil {
		return nil, usagef("%v", err)
	}
	if v.steps, err = parseReplace(*f.replace); err != nil {
		return nil, usagef("%v", err)
	}
	if v.grid, err = whatif.ParseGrid(*f.grid); err != nil {
		return nil, usagef("-%v", err)
	}
	if v.block, err = whatif.ParseBlock(*f.block); err != nil {
		return nil, usagef("-%v", err)
	}
	return v, nil
}

// parseReplace reads -replace as whatif.ParseReplace does, and rejects
// what it would take as op names but no traced op is called: a single
// name with a '-' (a recipe misspelled: recipes have one, ops none) or
// a name with other than letters, digits, '_', '.' and "::".
func parseReplace(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if whatif.RecipeByName(s) != nil {
		return whatif.ParseReplace(s)
	}
	recipes := strings.Join(whatif.RecipeNames(), ", ")
	if !strings.Contains(s, ",") && strings.Contains(s, "-") {
		return nil, fmt.Errorf("-replace %s: no such recipe (recipes: %s)", s, recipes)
	}
	for _, op := range strings.Split(s, ",") {
		if op = strings.TrimSpace(op); op != "" && !opName.MatchString(op) {
			return nil, fmt.Errorf("-replace %s: %q is neither an op name nor a signature ID (or give a recipe: %s)", s, op, recipes)
		}
	}
	return whatif.ParseReplace(s)
}

// opName matches an op as -replace takes it: "pow", "aten::pow",
// "aten::add.Tensor", or a signature ID.
var opName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*::)?[A-Za-z_][A-Za-z0-9_.]*$|^[0-9a-f]{12}$`)

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
