package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
	"github.com/kreplay/kreplay/whatif"
	"github.com/kreplay/kreplay/workload"
)

// command is one kreplay subcommand: its name, its arguments and what it
// does, as the help shows them, and its body (nil for help, which run
// answers itself).
type command struct {
	name, args, help string
	run              func(args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"capture", "SPEC -o DIR [-force] [-ticks N] [-processes N] [-no-binaries] [-no-schedule] [-schedule-inferences N] [-profile-warmup N] [-python PYTHON]",
			"run a workload spec: its unprofiled runs metered (the median of N processes), each with the\n" +
				"           host's schedule (every measured inference's, the driver's entry points interposed; with the CUPTI\n" +
				"           fallback, a few more recorded between the measured blocks), one profiled inference\n" +
				"           (after -profile-warmup ones, profiled and discarded), its environment, into a bundle directory", cmdCapture},
		{"import", "[-o FILE] [-workload NAME] TRACE|SET|BUNDLE", "reduce a trace to its signature set (JSON, on standard output without -o)", cmdImport},
		{"run", "[-tiers 1,2,3] [-cache context|auto|rotating|warm|cold|primed] [-devices 0,1] [-ids ID,...] [-skip ID,...] [-energy [-ticks N]]\n" +
			"           [-measured FILE] [-json FILE] [-out FILE [-resume]] [-binaries=false] [-roofline] [-families] [TRACE|SET|BUNDLE ...]",
			"replay each signature alone on the GPU and compare with the trace; with one trace per rank\n" +
				"           and -devices, the collectives across GPUs and a prediction per rank, and for a bundle the\n" +
				"           group's whole inference from its host schedules (default input: the embedded bundle\n" +
				"           " + traces.DefaultBundle + ")." + lostHelp("-out FILE -resume"), cmdRun},
		{"inspect", "[-top N] [-json] [TRACE|SET|BUNDLE ...]", "print tier and class totals, busy/idle time and the top signatures; for a bundle with host\n" +
			"           schedules, their summary and the whole inference simulated with the trace's own kernel times\n" +
			"           against the measured run, a CPU check of the host model (default input: the embedded bundle\n" +
			"           " + traces.DefaultBundle + ")", cmdInspect},
		{"gen", "[-o DIR] [-pkg NAME] TRACE|SET|BUNDLE", "write a Go benchmark package of a signature set, with a bundle's workload spec; a bundle of\n" +
			"           several ranks gives one package of them all, whose model benchmark runs the ranks together\n" +
			"           (default DIR: ./PKG, PKG the workload as a Go identifier, e.g. ./bloom_560m_prefill)", cmdGen},
		{"report", "[-json] [-plots DIR] [-sets SET,...] [-top N] [-memset-arrival=false] BENCH ...", "predict each workload's GPU time and energy from go test -bench output", cmdReport},
		{"predict", "[-o BENCH] [-energy=false] [-ticks N] [-model auto|measured|run|none] [-no-timeline] [-inference=false] [-plots DIR] [-resume]\n" +
			"           [-skip ID,...] [-budget D] [-binaries=false] [-memset-arrival=false] [-families] [-devices 0,1] [TRACE|SET|BUNDLE]",
			"the whole flow: inspect, then on a GPU replay every signature with its energy (on by default),\n" +
				"           the whole inference from the host's schedule and the timeline, and report the prediction against the bundle's measured run or the real\n" +
				"           inference run now (default input: the embedded bundle " + traces.DefaultBundle + "); a bundle of several ranks\n" +
				"           is predicted as kreplay run -devices does (a line per rank, the group's whole inference)." + lostHelp("-resume"), cmdPredict},
		{"diff", "[-json] [-all] [-alpha A] [-sets SET,...] BENCH BENCH", "compare two go test -bench outputs, the old (first) and the new, per signature and predicted\n" +
			"           total (with the interval of its change), and attribute each significant change to what the\n" +
			"           outputs record differently: kernel, configuration lines, throttling", cmdDiff},
		{"whatif", "-replace OPS|RECIPE [-kernel KERNEL -name NAME] [-grid DIMS] [-block SIZES] [-shared BYTES] [-eps E] [-tol T]\n" +
			"           [-bench BENCH] [-energy [-ticks N] [-again] [-removed]] [-no-timeline] [-rounds N] [-settle D] [-probe-modes MODES]\n" +
			"           [-o FILE] TRACE|SET|BUNDLE",
			"the fused-kernel what-if: find the runs of the ops a kernel replaces; on a GPU check its output\n" +
				"           against theirs, predict the new GPU time (and energy) and check the prediction against\n" +
				"           the timeline replay with the kernel substituted (recipes: " + strings.Join(whatif.RecipeNames(), ", ") + ")", cmdWhatIf},
		{"timeline", "[-o FILE] [-bench BENCH,...] [TRACE|SET|BUNDLE]", "export the traced timeline, and each invocation's replayed time beside it, in the Trace\n" +
			"           Event Format that Perfetto's UI and chrome://tracing load (default input: the embedded\n" +
			"           bundle " + traces.DefaultBundle + ")", cmdTimeline},
		{"version", "", "print kreplay's version: the module's, the VCS revision and time it was built from, the Go version", cmdVersion},
		{"help", "[COMMAND]", "print this help, or a command's (as kreplay COMMAND -h does)", nil},
	}
}

// lostHelp is what run's and predict's help say of a replay that faults;
// resume is how the command reuses the results so far.
func lostHelp(resume string) string {
	return "\n           A replay that faults on the GPU (CUDA_ERROR_ILLEGAL_ADDRESS and the like) loses the CUDA\n" +
		"           context: no signature after it is measured, the results so far are still written, and a\n" +
		"           line on standard error names it; where the results can be reused (" + resume + "), the command\n" +
		"           goes on in a new process with -resume -skip ID (at most " + strconv.Itoa(maxGoOn) + " times; " + envGoOn + "=" + strconv.Itoa(maxGoOn) + "\n" +
		"           stops it) and exits with its status; otherwise it exits 1, and " + resume + " -skip ID measures the rest"
}

// causalFlag is the flag that sets tier3.Config.UniformScores (false);
// a command that has it (causalScoresFlag) reads it with tier3Config.
const causalFlag = "causal-scores"

// causalScoresFlag adds -causal-scores to fs.
func causalScoresFlag(fs *flag.FlagSet) {
	fs.Bool(causalFlag, true, "feed a softmax over square scores [..., S, S] causally masked inputs, as a causal language model's prefill has\n(a guess from the shape, tier3.Config.UniformScores; false: uniform inputs, as for an encoder)")
}

// tier3Config is how tier 3 replays by the parsed flags of fs: with
// -causal-scores=false, uniform scores.
func tier3Config(fs *flag.FlagSet) tier3.Config {
	var c tier3.Config
	if f := fs.Lookup(causalFlag); f != nil {
		c.UniformScores = !f.Value.(flag.Getter).Get().(bool)
	}
	return c
}

// embeddedBundles lists the bundles embedded in kreplay, for the help.
func embeddedBundles() []string { return traces.Bundles() }

func cmdImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import")
	out := fs.String("o", "", "write the set to `FILE` (default: standard output)")
	workload := fs.String("workload", "", "workload `NAME` (default: from the file name)")
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	set, _, err := loadOne(pos[0], signatures.Options{Workload: *workload})
	if err != nil {
		return err
	}
	if *out == "" {
		return signatures.WriteSet(stdout, set)
	}
	if err := signatures.WriteSetFile(*out, set); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s: %d signatures from %d GPU activities -> %s\n", pos[0], len(set.Signatures), set.Links.Activities, *out)
	return nil
}

func cmdInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect")
	causalScoresFlag(fs)
	top := fs.Int("top", 15, "show the top `N` signatures by traced time")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args, 1, -1, defaultInput)
	if err != nil {
		return err
	}
	if *top < 0 {
		return usagef("-top %d: want 0 or more", *top)
	}
	var all []*signatures.Inspection
	var sets []*signatures.Set
	var bundles []loadedBundle
	var failed []string
	for _, p := range pos {
		in, err := loadInput(p, signatures.Options{})
		if err != nil {
			// One bad file does not stop the others.
			fmt.Fprintf(stderr, "kreplay inspect: %v\n", err)
			failed = append(failed, p)
			continue
		}
		if in.bundle != nil {
			bundles = append(bundles, loadedBundle{p, in})
		}
		for _, set := range in.sets {
			sets = append(sets, set)
			ins := signatures.Inspect(set, *top)
			ins.Paths, ins.PathOf = replay.PlanPaths(set, tier3Config(fs))
			all = append(all, ins)
		}
	}
	pairRanks(sets, all, stderr)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(all); err != nil {
			return err
		}
	} else {
		for i, in := range all {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			if err := in.WriteText(stdout); err != nil {
				return err
			}
		}
		for _, b := range bundles {
			writeSchedules(b.in.bundle, stdout, stderr)
			writeTracedCheck(b, stdout, stderr)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d files failed: %s", len(failed), len(pos), strings.Join(failed, ", "))
	}
	return nil
}

// loadedBundle is a bundle argument and what it loaded.
type loadedBundle struct {
	arg string
	in  *input
}

// writeTracedCheck prints the bundle's whole inference simulated from its
// host schedules with the trace's own kernel times (predict.CheckWithTrace)
// where it has schedules; one that cannot be simulated is said on stderr.
func writeTracedCheck(b loadedBundle, stdout, stderr io.Writer) {
	if len(b.in.bundle.Schedules()) == 0 {
		return
	}
	c, err := predict.CheckWithTrace(b.arg, b.in.bundle, b.in.sets)
	if err != nil {
		fmt.Fprintf(stderr, "kreplay inspect: %s: the host model with the trace's times: %v\n", b.arg, err)
		return
	}
	fmt.Fprintf(stdout, "\n%s\n", c)
}

// writeSchedules prints a summary of each of the bundle's host schedules
// (schedule.Summarize); one that does not read is said on stderr.
func writeSchedules(b *workload.Bundle, stdout, stderr io.Writer) {
	for i, name := range b.Schedules() {
		s, err := b.ReadSchedule(i)
		if err != nil {
			fmt.Fprintf(stderr, "kreplay inspect: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "\nhost schedule %s: ", name)
		schedule.Summarize(s).WriteText(stdout)
	}
}

// defaultInput is what commands use when given no trace: the embedded
// BLOOM-560M prefill bundle.
const defaultInput = embeddedPrefix + traces.DefaultBundle

// embeddedPrefix names a bundle or trace embedded in the binary:
// "embedded:NAME".
const embeddedPrefix = "embedded:"

// input is what a TRACE argument names: its signature sets (one per
// trace), and the bundle they came from, if any.
type input struct {
	sets   []*signatures.Set
	bundle *workload.Bundle
}

// warnings receives what loadInput warns of (standard error).
var warnings io.Writer = os.Stderr

// loadInput reads a TRACE argument: a signature set file, a Kineto trace,
// a bundle directory, or "embedded:NAME", an embedded bundle or trace (by
// its name before the traces became bundles). opt.Workload, when set,
// names the sets' workload.
func loadInput(arg string, opt signatures.Options) (*input, error) {
	var in *input
	var err error
	switch name, embedded := strings.CutPrefix(arg, embeddedPrefix); {
	case embedded:
		in, err = loadEmbedded(name, opt)
	case workload.IsBundle(arg):
		in = &input{}
		if in.bundle, err = workload.ReadBundle(arg); err == nil {
			in.sets, err = in.bundle.Sets()
		}
	default:
		var set *signatures.Set
		set, err = signatures.Load(arg, opt)
		in = &input{sets: []*signatures.Set{set}}
	}
	if err != nil {
		return nil, err
	}
	if in.bundle != nil {
		for _, w := range in.bundle.Warnings {
			fmt.Fprintf(warnings, "kreplay: warning: %s\n", w)
		}
	}
	if opt.Workload != "" {
		for _, s := range in.sets {
			s.Source.Workload = opt.Workload
		}
	}
	return in, nil
}

// loadEmbedded opens an embedded bundle, or one trace of one by its old
// name (imported under that name, as before the traces became bundles).
func loadEmbedded(name string, opt signatures.Options) (*input, error) {
	bundle, _, isTrace := traces.Locate(name)
	if !isTrace {
		bundle = name
	}
	fsys, err := traces.Bundle(bundle)
	if err != nil {
		return nil, fmt.Errorf("%s: no such embedded bundle or trace (bundles %s; traces %s)", name,
			strings.Join(traces.Bundles(), ", "), strings.Join(traces.Names(), ", "))
	}
	in := &input{}
	if in.bundle, err = workload.OpenBundle(fsys, embeddedPrefix+bundle); err != nil {
		return nil, err
	}
	if !isTrace {
		in.sets, err = in.bundle.Sets()
		return in, err
	}
	f, err := traces.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set, err := signatures.Import(f, name, opt)
	if err != nil {
		return nil, err
	}
	in.sets = []*signatures.Set{set}
	return in, nil
}

// load reads a TRACE argument for a command that takes one trace.
func load(arg string) (*signatures.Set, *workload.Bundle, error) {
	return loadOne(arg, signatures.Options{})
}

func loadOne(arg string, opt signatures.Options) (*signatures.Set, *workload.Bundle, error) {
	in, err := loadInput(arg, opt)
	if err != nil {
		return nil, nil, err
	}
	if len(in.sets) != 1 {
		return nil, nil, fmt.Errorf("%s: the bundle holds %d traces, one per rank (%s), and this command takes one: "+
			"pass one of them (embedded:BUNDLE.rankN.trace.json.gz for an embedded bundle), or replay them all with kreplay run -devices",
			arg, len(in.sets), strings.Join(in.bundle.Manifest.Traces, ", "))
	}
	return in.sets[0], in.bundle, nil
}

// pairRanks pairs the collectives of sets that are ranks of one multi-rank
// workload and records each rank's communication split in its inspection.
func pairRanks(sets []*signatures.Set, ins []*signatures.Inspection, stderr io.Writer) {
	byWorkload := map[string][]int{}
	var order []string
	for i, s := range sets {
		if s.Source.WorldSize < 2 {
			continue
		}
		w := s.Source.Workload
		if byWorkload[w] == nil {
			order = append(order, w)
		}
		byWorkload[w] = append(byWorkload[w], i)
	}
	for _, w := range order {
		idx := byWorkload[w]
		if len(idx) < 2 {
			continue
		}
		group := make([]*signatures.Set, len(idx))
		for k, i := range idx {
			group[k] = sets[i]
		}
		_, sums, err := signatures.PairCollectives(group)
		if err != nil {
			fmt.Fprintf(stderr, "kreplay inspect: %s: %v\n", w, err)
			continue
		}
		for _, sum := range sums {
			for _, i := range idx {
				if sets[i].Source.Rank == sum.Rank {
					c := sum
					ins[i].Communication = &c
				}
			}
		}
	}
}
