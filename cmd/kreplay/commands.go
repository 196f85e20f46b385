package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
	"github.com/kreplay/kreplay/workload"
)

// command is one kreplay subcommand.
type command struct {
	name, args, help string
	run              func(args []string, stdout, stderr io.Writer) error
}

var commands []command

func init() {
	commands = []command{
		{"capture", "SPEC -o DIR [-force] [-ticks N] [-processes N] [-no-binaries] [-profile-warmup N] [-python PYTHON]", "run a workload spec: its unprofiled runs metered (the median of N processes), one profiled\n           inference (after -profile-warmup ones, profiled and discarded), its environment, into a bundle directory", cmdCapture},
		{"import", "TRACE [-o FILE] [-workload NAME]", "reduce a Kineto trace to its signature set (JSON)", cmdImport},
		{"run", "[-tiers 1,2,3] [-cache context|auto|rotating|warm|cold|primed] [-devices 0,1] [-ids ID,...] [-skip ID,...] [-energy [-ticks N]]\n           [-measured measured.json] [-json FILE] [-out FILE.jsonl [-resume]] [-binaries=false] [-roofline] [TRACE|SET.json|BUNDLE ...]",
			"replay each signature alone on the GPU and compare with the trace; with one trace per rank\n           and -devices, the collectives across GPUs and a prediction per rank." + lostHelp("-out FILE -resume"), cmdRun},
		{"inspect", "[-top N] [-json] [TRACE|SET.json|BUNDLE ...]", "print tier and class totals, busy/idle time and the top signatures\n           (default: the embedded bundle " + traces.DefaultBundle + ")", cmdInspect},
		{"gen", "[-o DIR] [-pkg NAME] SET.json|TRACE|BUNDLE|embedded:NAME", "write a Go benchmark package of a signature set, with a bundle's workload spec\n           (default DIR: bench/WORKLOAD)", cmdGen},
		{"report", "[-json] [-plots DIR] [-sets SET.json,...] [-top N] [-memset-arrival=false] BENCH.txt ...", "predict each workload's GPU time and energy from go test -bench output", cmdReport},
		{"predict", "[-o FILE.bench] [-energy] [-ticks N] [-model auto|measured|run|none] [-no-timeline] [-plots DIR] [-resume]\n           [-skip ID,...] [-budget D] [-binaries=false] [-memset-arrival=false] [TRACE|SET.json|BUNDLE]", "the whole flow: inspect, then on a GPU replay every signature with its energy and the\n           timeline, and report the prediction against the bundle's measured run or the real\n           inference run now (default: the embedded bundle " + traces.DefaultBundle + ")." + lostHelp("-resume"), cmdPredict},
		{"diff", "[-json] [-all] [-alpha A] [-sets SET.json,...] OLD.txt NEW.txt", "compare two go test -bench outputs, per signature and predicted total (with the\n           interval of its change), and attribute each significant change to what the outputs\n           record differently: kernel, configuration lines, throttling", cmdDiff},
		{"whatif", "-replace OPS|RECIPE [-kernel FILE.cu|FILE.cubin -name KERNEL] [-grid rows] [-block 256] [-shared B] [-eps E] [-tol T]\n" +
			"           [-bench FILE.bench] [-energy [-ticks N] [-again] [-removed]] [-no-timeline] [-rounds N] [-settle D] [-probe-modes MODES]\n" +
			"           [-o FILE.json] TRACE|SET.json|BUNDLE",
			"the fused-kernel what-if: find the runs of the ops a kernel replaces; on a GPU check its output\n" +
				"           against theirs, predict the new GPU time (and energy) and check the prediction against\n" +
				"           the timeline replay with the kernel substituted", cmdWhatIf},
		{"timeline", "[-o FILE.json] [-bench FILE.bench,...] [TRACE|SET.json|BUNDLE]", "export the traced timeline, and each invocation's replayed time beside it, in the Trace\n           Event Format that Perfetto's UI and chrome://tracing load (default: the embedded bundle " + traces.DefaultBundle + ")", cmdTimeline},
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

// errUsage marks errors that should print the command's usage.
var errUsage = errors.New("usage")

// errNothingMeasured says a command did its CPU part and measured nothing
// (no usable GPU): exit status 3, so that a script can tell it from an
// error and from a prediction.
var errNothingMeasured = errors.New("nothing was measured: no usable GPU")

// Exit statuses (the README lists them).
const (
	exitOK            = 0
	exitError         = 1
	exitUsage         = 2
	exitNoMeasurement = 3
)

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "usage: kreplay %s %s\n", c.name, c.args)
			return exitUsage
		case errors.Is(err, errNothingMeasured):
			fmt.Fprintf(stderr, "kreplay %s: %v (exit status %d)\n", c.name, err, exitNoMeasurement)
			return exitNoMeasurement
		}
		var lost *contextLost
		if errors.As(err, &lost) {
			fmt.Fprintf(stderr, "kreplay %s: %v\n", c.name, err)
			if code, ok := goOn(c.name, args[1:], lost, stdout, stderr); ok {
				return code
			}
			return exitError
		}
		fmt.Fprintf(stderr, "kreplay %s: %v\n", c.name, err)
		return exitError
	}
	fmt.Fprintf(stderr, "kreplay: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: kreplay COMMAND [ARGS]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", c.name, c.args, c.help)
	}
}

// newFlags returns a flag set that reports errors instead of exiting and
// whose -h says what the command does and takes, then its flags.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kreplay "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		for _, c := range commands {
			if c.name == name {
				fmt.Fprintf(stderr, "usage: kreplay %s %s\n\n%s\n\nflags:\n", c.name, c.args, strings.ReplaceAll(c.help, "\n           ", "\n"))
			}
		}
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may follow positional arguments and checks
// that lo to hi of those remain (hi < 0: no bound), errUsage otherwise;
// with none and dflt given, the positional arguments are dflt.
func parseArgs(fs *flag.FlagSet, args []string, lo, hi int, dflt ...string) ([]string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) == 0 && len(dflt) > 0 {
		pos = dflt
	}
	if len(pos) < lo || hi >= 0 && len(pos) > hi {
		return nil, errUsage
	}
	return pos, nil
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

// parseInterspersed parses flags that may follow positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func cmdImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
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
	fs := newFlags("inspect", stderr)
	causalScoresFlag(fs)
	top := fs.Int("top", 15, "show the top `N` signatures by traced time")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args, 1, -1, defaultInput)
	if err != nil {
		return err
	}
	var all []*signatures.Inspection
	var sets []*signatures.Set
	var failed []string
	for _, p := range pos {
		in, err := loadInput(p, signatures.Options{})
		if err != nil {
			// One bad file does not stop the others.
			fmt.Fprintf(stderr, "kreplay inspect: %v\n", err)
			failed = append(failed, p)
			continue
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
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d files failed: %s", len(failed), len(pos), strings.Join(failed, ", "))
	}
	return nil
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
