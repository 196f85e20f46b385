package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// cmdPredict is the whole flow on one workload: import and inspect (CPU),
// then, where a GPU is usable, replay every signature with its energy,
// the timeline and the real inference, write them as benchmark output
// and report the prediction against the trace and the model.
func cmdPredict(args []string, stdout, stderr io.Writer) error {
	flags := newFlags("predict")
	causalScoresFlag(flags)
	out := flags.String("o", "", "write the measurements as go test -bench output to `BENCH` (default WORKLOAD.bench)")
	devIndex := flags.Int("device", 0, "CUDA device `INDEX`")
	devList := flags.String("devices", "", "spread the signature replays over these CUDA `DEVICES` (comma-separated, of one GPU kind,\nor \"all\": every local GPU of device 0's kind; -families and -shared-energy are then ignored);\nthe timeline and the host probe run on the first (one GPU's energy windows beside another's\nwork: results/h200x2/two-gpus); a bundle of several ranks: its ranks' GPUs (default 0 to ranks-1)")
	cacheFlag := flags.String("cache", replay.DefaultCacheMode.String(), "L2 cache `MODE` of the signature replays (see kreplay run -h)")
	withEnergy := flags.Bool("energy", true, "measure the energy with NVML: the inference's, and each signature's per invocation where -signature-energy says (-energy=false: times only)")
	sigEnergy := flags.String("signature-energy", string(predict.SignatureEnergyAuto), "`MODE` of each signature's own energy window: on, off (times only; the host probe's waiting power and\nthe paced timeline's energy still measured), or auto (off where the inference's energy is in place:\n-energy, a recorded host schedule and the timeline; else on; docs/whole-inference.md)")
	ticks := flags.Int("ticks", 31, "NVML energy-counter `TICKS` per signature's energy window (about 0.1 s each; 101 puts one tick under 1%)")
	budget := flags.Duration("budget", 2*time.Second, "time `BUDGET` per signature (sampling stops earlier once converged)")
	pause := flags.Duration("pause", 50*time.Millisecond, pauseUsage)
	pauseAbove := pauseAboveFlag(flags)
	energyShare := flags.Float64("energy-share", 1, "measure the energy of the largest signatures that make up this `SHARE` of the traced time (0 to 1),\nand estimate the rest's from their class's measured power")
	energyWarmup := flags.Duration("energywarmup", time.Second, "launch for `DURATION` before each energy window opens (steady-state power and clocks)")
	energyDuty := flags.Bool("energy-duty", true, "measure a signature whose energy window ran power-capped again, in bursts with idle gaps under the cap")
	binaries := flags.Bool("binaries", true, "replay a bundle's signatures by their captured kernel binaries where recorded (false: as for a plain trace)")
	modelTicks := flags.Int("model-ticks", 20, "NVML energy-counter `TICKS` of the full model's energy window")
	noModel := flags.Bool("no-model", false, "deprecated: the same as -model none, which replaces it")
	modelMode := flags.String("model", "auto", "the full-model reference: `MODE` measured (a bundle's measured run), run (run the workload now),\nnone, or auto (measured for a bundle that has one, else run)")
	noTimeline := flags.Bool("no-timeline", false, "skip the timeline replay")
	dataFlow := flags.Bool("timeline-dataflow", false, "replay the timeline and the paced pass on the recorded data flow: the captured binaries share the buffers\nof the allocations they point into, so that each reads where its producer wrote. An experiment: the kernels' times come\nout as traced, but the values they compute drift from real data (to NaN), so the paced pass's energy is not used; where a\nkernel fails on them (a decode's index out of range) the timeline is refused, naming it; results/h200/timeline-dataflow/")
	inference := flags.Bool("inference", true, "predict the whole inference (wall time, time per token, energy) from the bundle's host schedule\n(or the trace's own, a guess) and a host probe on this GPU (docs/whole-inference.md)")
	plots := flags.String("plots", "", "write the report's plots (SVG and PNG) into `DIR`")
	top := flags.Int("top", 10, "show the top `N` signatures")
	arrival := memsetArrivalFlag(flags)
	progOut := flags.String("progress", "", "append each signature's result to `FILE` (JSON lines) as soon as it is measured (default WORKLOAD.progress.jsonl)")
	resume := flags.Bool("resume", false, "reuse the signature results already in the progress file and measure only the rest")
	skipFlag := flags.String("skip", "", skipFlagUsage)
	families := familiesFlag(flags)
	sharedEnergy := sharedEnergyFlag(flags)
	pos, err := parseArgs(flags, args, 1, 1, defaultInput)
	if err != nil {
		return err
	}
	devices, all, err := parseDevices(*devList)
	if err != nil {
		return err
	}
	if *noModel {
		if set := setFlags(flags); set["model"] && *modelMode != "none" {
			return usagef("-no-model and -model %s: give one (-no-model is the deprecated form of -model none)", *modelMode)
		}
		fmt.Fprintln(stderr, "kreplay predict: -no-model is deprecated: use -model none")
		*modelMode = "none"
	}
	cache, err := replay.ParseCacheMode(*cacheFlag)
	sigMode, sigErr := predict.ParseSignatureEnergy(*sigEnergy)
	switch {
	case err != nil:
		return usagef("-cache: %v", err)
	case sigErr != nil:
		return usagef("-signature-energy %q: want %s", *sigEnergy, signatureEnergyModes())
	case !slices.Contains(modelModes, *modelMode):
		return usagef("-model %q: want %s", *modelMode, strings.Join(modelModes, ", "))
	case *energyShare < 0 || *energyShare > 1:
		return usagef("-energy-share %g: want a share from 0 to 1", *energyShare)
	case *ticks < 2 || *modelTicks < 2:
		return usagef("-ticks %d, -model-ticks %d: want 2 or more", *ticks, *modelTicks)
	case *budget <= 0 || *energyWarmup < 0:
		return usagef("-budget %v, -energywarmup %v: want a positive budget and a warm-up of 0 or more", *budget, *energyWarmup)
	case checkSharedEnergy(*sharedEnergy) != nil:
		return checkSharedEnergy(*sharedEnergy)
	case *devIndex < 0:
		return usagef("-device %d: want a device index, 0 or more", *devIndex)
	case *top < 0:
		return usagef("-top %d: want 0 or more", *top)
	case *dataFlow && *noTimeline:
		return usagef("-timeline-dataflow with -no-timeline: the data flow is the timeline's; give one")
	}
	peaks, err := roofline.OptionsFromEnv()
	if err != nil {
		return err
	}
	loaded, err := loadInput(pos[0], signatures.Options{})
	if err != nil {
		return err
	}
	if len(loaded.sets) > 1 {
		return predictRanks(pos[0], len(loaded.sets), devices, rankWorkload(loaded), flags, stdout, stderr)
	}
	set, bundle := loaded.sets[0], loaded.bundle
	if spreadWanted(all, setFlags(flags), *families || *sharedEnergy > 0) {
		devices = allLocalGPUs("predict", stderr)
	}
	skip, err := parseSkip(*skipFlag, []*signatures.Set{set}, *binaries)
	if err != nil {
		return err
	}
	ref, err := modelReference(*modelMode, set, bundle)
	if err != nil {
		return err
	}
	var sched *schedule.Schedule
	var rt *signatures.Runtime
	var schedErr error
	if *inference {
		sched, rt, schedErr = predict.HostScheduleFor(pos[0], bundle, set)
	}
	if err := signatures.Inspect(set, *top).WriteText(stdout); err != nil {
		return err
	}
	workload := bench.Workload(set.Source)
	fmt.Fprintln(stdout)
	if *progOut == "" {
		*progOut = workload + ".progress.jsonl"
	}
	var previous map[string]replay.Entry
	if *resume {
		all, err := readProgress(*progOut)
		if err != nil {
			return err
		}
		previous = all[set.Source.File]
		fmt.Fprintf(stderr, "kreplay predict: %d results from %s reused\n", len(previous), *progOut)
	}
	prog := &lazyProgress{path: *progOut, keep: *resume}
	defer prog.close()
	record := func(e replay.Entry) error { return prog.add(set.Source, e) }
	fr, err := predict.Flow(set, predict.FlowOptions{
		Previous: previous,
		Done: func(e replay.Entry) {
			if e.Result == nil {
				return
			}
			if err := record(e); err != nil {
				fmt.Fprintf(stderr, "kreplay predict: %s: %v\n", *progOut, err)
			}
		},
		Skip:    skip,
		Device:  *devIndex,
		Devices: devices,
		Cache:   cache,
		Tier3:   tier3Config(flags),
		Measure: replay.Options{Energy: *withEnergy, EnergyTicks: *ticks, Budget: *budget, NoEnergyDuty: !*energyDuty,
			EnergyWarmup: *energyWarmup, Pause: pauseOption(*pause), PauseAbove: pauseAboveOption(*pauseAbove)},
		SignatureEnergy:  sigMode,
		EnergyShare:      *energyShare,
		SharedEnergy:     *sharedEnergy,
		Families:         *families,
		NoBinaries:       !*binaries,
		NoTimeline:       *noTimeline,
		TimelineDataFlow: *dataFlow,
		NoModel:          ref.none,
		ModelTicks:       *modelTicks,
		Spec:             ref.spec,
		Measured:         ref.measured,
		MeasuredFrom:     ref.from,
		Peaks:            peaks,
		Progress:         stderr,
		Schedule:         sched,
		Runtime:          rt,
	})
	if errors.Is(err, predict.ErrNoGPU) {
		return cpuPartEnds(stdout, err, "predict", "replay every signature (with its energy),\n"+
			"the timeline and the real inference, and report the prediction")
	}
	if err != nil {
		return err
	}
	if schedErr != nil {
		fmt.Fprintf(stderr, "kreplay predict: the whole inference is not predicted: %v\n", schedErr)
	}
	if ref.measured != nil && ref.gpu != "" && ref.gpu != fr.GPU {
		fmt.Fprintf(stderr, "kreplay predict: the measured run is from %s, the replays ran on %s: the comparison is across GPUs\n", ref.gpu, fr.GPU)
	}
	if *out == "" {
		*out = workload + ".bench"
	}
	pkg := path.Join("github.com/kreplay/kreplay/bench", bench.PackageName(workload))
	if err := atomicfile.Write(*out, func(w io.Writer) error { return fr.WriteBench(w, pkg) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kreplay predict: measurements in %s (benchstat and kreplay report read it) at %s\n", *out, time.Now().Format(time.TimeOnly))
	in, err := predict.ReadFiles([]string{*out})
	if err != nil {
		return err
	}
	p, err := reportWithPlots(in, []*signatures.Set{set}, predict.ReportOptions{Top: *top, NoMemsetArrival: !*arrival}, *plots, "predict", stderr)
	if err != nil {
		return err
	}
	if err := p.WriteText(stdout); err != nil {
		return err
	}
	return lostError([]error{fr.Lost}, true) // a lost CUDA context: the prediction lacks what came after
}

// signatureEnergyModes names the values of predict's -signature-energy.
func signatureEnergyModes() string {
	names := make([]string, len(predict.SignatureEnergyModes))
	for i, m := range predict.SignatureEnergyModes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// modelModes are the values of predict's -model.
var modelModes = []string{"auto", "measured", "run", "none"}

// setFlags returns the names of the flags of fs the command line set.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// modelRef is predict's full-model reference: a measured run, the spec
// to run, or none.
type modelRef struct {
	none     bool
	spec     *workload.Spec
	measured *runner.Result
	from     string // where the measured run is from
	gpu      string // the GPU it was measured on
}

// modelReference picks the full-model reference by mode: measured (the
// bundle's measured run of the set), run (the bundle's spec, or for a
// trace the built-in one its workload name gives), none, or auto
// (measured when the bundle has a run of the set, else run).
func modelReference(mode string, set *signatures.Set, b *workload.Bundle) (modelRef, error) {
	switch mode {
	case "none":
		return modelRef{none: true}, nil
	case "auto", "measured", "run":
	default:
		return modelRef{}, fmt.Errorf("-model %q: want auto, measured, run or none", mode)
	}
	if mode != "run" && b != nil {
		m, err := b.Measured()
		if err != nil {
			return modelRef{}, err
		}
		if m != nil {
			r, err := m.Lookup(set.Source.Workload, set.Source.Rank, set.Source.WorldSize)
			if err != nil {
				return modelRef{}, err
			}
			res, err := b.ModelRun(set)
			if err != nil {
				return modelRef{}, err
			}
			return modelRef{measured: res, from: m.File, gpu: r.GPU}, nil
		}
	}
	if mode == "measured" {
		return modelRef{}, fmt.Errorf("-model measured: %s has no measured run (a bundle's measured.json holds one)", set.Source.File)
	}
	if b == nil {
		return modelRef{}, nil // Flow runs the spec the workload's name gives
	}
	spec, err := b.Spec()
	return modelRef{spec: spec}, err
}

// lazyProgress is predict's progress file, opened at the first result so
// that a run without a GPU leaves none; unless keep (-resume), it starts
// empty.
type lazyProgress struct {
	path string
	keep bool
	f    *progressFile
}

func (p *lazyProgress) add(src signatures.Source, e replay.Entry) error {
	if p.f == nil {
		if !p.keep {
			if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		f, err := openProgress(p.path)
		if err != nil {
			return err
		}
		p.f = f
	}
	return p.f.add(src, e)
}

func (p *lazyProgress) close() {
	if p.f != nil {
		p.f.Close()
	}
}
