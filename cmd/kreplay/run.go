package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kreplay/kreplay/internal/atomicfile"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
	"github.com/kreplay/kreplay/workload"
)

// runOutput is what `kreplay run -json` writes: per set, the entries and
// the coverage by tier.
type runOutput struct {
	Device   string            `json:"device"`
	Driver   int               `json:"cuda_driver"`
	Set      signatures.Source `json:"set"`
	Cache    string            `json:"cache"`
	Entries  []replay.Entry    `json:"entries"`
	Coverage map[string]predict.Coverage
	// Peaks and Roofline are the GPU's peaks and each replayed entry's
	// place on the roofline, with -roofline.
	Peaks    *roofline.Peaks `json:"peaks,omitempty"`
	Roofline []roofline.Row  `json:"roofline,omitempty"`
}

// runFlags are kreplay run's flags, parsed.
type runFlags struct {
	tiers                 []signatures.Tier
	cache                 replay.CacheMode
	tier3                 tier3.Config
	ids, jsonOut, progOut string
	// skip is -skip as given; skipped, the signatures it leaves out
	// (replay.SuiteOptions.Skip), once the sets are loaded.
	skip                     string
	skipped                  map[string]string
	measuredFile             string
	devices                  []int
	spread                   bool // -devices all (or spreadDefault): every local GPU of device 0's kind, for one rank's input
	measure                  replay.Options
	resume, energy, binaries bool
	families                 bool
	// eachRank measures every rank's signatures, not once per group.
	eachRank               bool
	tolerance, energyShare float64
	sharedEnergy           int
	idle                   time.Duration
	// roofline asks for the roofline table; peaks are the GPU's, once
	// had.
	roofline bool
	peaks    *roofline.Peaks
}

// parseRunFlags parses kreplay run's arguments into its flags and its
// positional arguments (the default input when there are none).
func parseRunFlags(args []string, stderr io.Writer) (*runFlags, []string, error) {
	fs := newFlags("run")
	causalScoresFlag(fs)
	tiersFlag := fs.String("tiers", "1,2,3", "replay only these `TIERS` (comma-separated)")
	cacheFlag := fs.String("cache", replay.DefaultCacheMode.String(), "L2 cache `MODE`: context (auto, but a captured kernel, memory-bound GEMMs too, runs after the launches recorded just before it),\nauto (weights rotate, layer norm cold, other tier-3 kernels primed, the rest warm), rotating, warm, cold or primed")
	ids := fs.String("ids", "", "replay only these signature `IDS` (comma-separated)")
	skip := fs.String("skip", "", skipFlagUsage)
	budget := fs.Duration("budget", 2*time.Second, "time `BUDGET` per signature")
	warmup := fs.Duration("warmup", 20*time.Millisecond, "launch for `DURATION` before timing each signature")
	minTime := fs.Duration("mintime", 0, "sample each signature for at least `DURATION`")
	pause := fs.Duration("pause", 50*time.Millisecond, pauseUsage)
	pauseAbove := pauseAboveFlag(fs)
	cooldown := fs.Duration("cooldown", 0, "idle `PAUSE` between samples (keeps heavy kernels off the power cap)")
	target := fs.Float64("ci", 0.01, "stop sampling at this relative confidence-interval half-width of the replay time's median")
	graph := fs.Bool("graph", true, "time batches captured in a CUDA graph (false: direct launches)")
	withEnergy := fs.Bool("energy", false, "also measure energy per invocation with NVML (about 11 s per signature with the default -ticks)")
	ticks := fs.Int("ticks", 0, "NVML energy-counter `TICKS` per energy window (default 101: one tick under 1%)")
	energyShare := fs.Float64("energy-share", 1, "with -energy: measure the energy of the largest signatures that make up this `SHARE` of the traced time, estimate the rest's")
	energyDuty := fs.Bool("energy-duty", true, "with -energy: measure a signature whose window ran power-capped again, in bursts with idle gaps under the cap")
	energyWarmup := fs.Duration("energywarmup", time.Second, "with -energy: launch for `DURATION` before each energy window opens (steady-state power and clocks)")
	kernels := fs.Bool("kernels", true, "time the kernels and record which ran, with CUPTI")
	devIndex := fs.Int("device", 0, "CUDA device `INDEX`")
	devList := fs.String("devices", "", "replay on these CUDA `DEVICES` (comma-separated): signatures are spread over them, and the collectives of one trace per rank run across them through NCCL;\n\"all\", for one trace: every local GPU of device 0's kind (-families and -shared-energy are then ignored)")
	jsonOut := fs.String("json", "", "write the results as JSON to `FILE`")
	progOut := fs.String("out", "", "append each signature's result to `FILE` (JSON lines) as soon as it is measured")
	resume := fs.Bool("resume", false, "with -out: reuse the results already in the file and measure only the rest")
	tol := fs.Float64("tolerance", 0.10, "ratio tolerance for the within-tolerance share")
	measuredFlag := fs.String("measured", "", "compare the per-rank prediction with the runs in `FILE` (the format of measured.json: wall time and energy per inference, by workload and rank;\ndefault: the bundle's own)")
	binaries := fs.Bool("binaries", true, "replay a bundle's signatures by their captured kernel binaries where recorded (false: as for a plain trace)")
	idleWin := fs.Duration("idle", time.Second, "with -energy: measure each GPU's idle power over `DURATION` before the run (the idle term of the energy prediction)")
	families := familiesFlag(fs)
	sharedEnergy := sharedEnergyFlag(fs)
	eachRank := fs.Bool("each-rank", false, "with a tensor-parallel bundle: measure every rank's signatures (default: a signature the same as an earlier rank's,\nby ID: kernel, launch, op and tensors, takes that rank's result, marked \"measured for rank N\")")
	rooflineFlag := fs.Bool("roofline", false, "place each replayed signature on the roofline of the GPU's peaks (cached per device, measured on first use;\n"+roofline.EnvPeaks+"=refresh measures them again), and its hardware roof at the SM clock probed on the GPU during its replay; one device only")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if *energyShare < 0 || *energyShare > 1 {
		return nil, nil, usagef("-energy-share %g: want a share from 0 to 1", *energyShare)
	}
	if err := checkSharedEnergy(*sharedEnergy); err != nil {
		return nil, nil, err
	}
	if err := checkRunValues(*resume, *progOut, *ticks, *budget, *target, *tol, *devIndex); err != nil {
		return nil, nil, err
	}
	f := &runFlags{ids: *ids, skip: *skip, jsonOut: *jsonOut, progOut: *progOut, measuredFile: *measuredFlag, resume: *resume,
		energy: *withEnergy, binaries: *binaries, families: *families, eachRank: *eachRank, tolerance: *tol, idle: *idleWin, energyShare: *energyShare, roofline: *rooflineFlag,
		sharedEnergy: *sharedEnergy,
		measure: replay.Options{Budget: *budget, TargetRelCI: *target, NoKernelTime: !*kernels, Warmup: *warmup, MinTime: *minTime,
			NoGraph: !*graph, Cooldown: *cooldown, Pause: pauseOption(*pause), PauseAbove: pauseAboveOption(*pauseAbove), Energy: *withEnergy, EnergyTicks: *ticks, EnergyWarmup: *energyWarmup,
			NoEnergyDuty: !*energyDuty, ClockProbe: *rooflineFlag}, tier3: tier3Config(fs)}
	for _, x := range strings.Split(*tiersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || n < 1 || n > 3 {
			return nil, nil, usagef("-tiers %q: want numbers 1 to 3", *tiersFlag)
		}
		f.tiers = append(f.tiers, signatures.Tier(n))
	}
	if f.cache, err = replay.ParseCacheMode(*cacheFlag); err != nil {
		return nil, nil, usagef("-cache: %v", err)
	}
	var all bool
	if f.devices, all, err = parseDevices(*devList); err != nil {
		return nil, nil, err
	}
	if len(f.devices) == 0 {
		f.devices = []int{*devIndex}
		f.spread = spreadWanted(all, setFlags(fs), f.roofline || f.families || f.sharedEnergy > 0)
	}
	if f.roofline && all {
		return nil, nil, usagef("-roofline: one device at a time (-devices %s)", devicesAll)
	}
	if f.roofline && len(f.devices) > 1 {
		return nil, nil, usagef("-roofline: one device at a time (-devices %s)", *devList)
	}
	if len(pos) == 0 {
		pos = []string{defaultInput}
	}
	return f, pos, nil
}

// checkRunValues checks the values of run's flags that parse without
// telling whether they make sense: a usage error names the one that
// does not.
func checkRunValues(resume bool, progOut string, ticks int, budget time.Duration, ci, tol float64, device int) error {
	switch {
	case resume && progOut == "":
		return usagef("-resume needs -out FILE")
	case ticks != 0 && ticks < 2:
		return usagef("-ticks %d: want 2 or more", ticks)
	case budget <= 0:
		return usagef("-budget %v: want a positive duration", budget)
	case !(ci > 0):
		return usagef("-ci %g: want a positive relative half-width", ci)
	case !(tol >= 0):
		return usagef("-tolerance %g: want 0 or more", tol)
	case device < 0:
		return usagef("-device %d: want a device index, 0 or more", device)
	}
	return nil
}

// parseDevices parses -devices: comma-separated CUDA device indices,
// each once, or devicesAll (all set, no indices).
func parseDevices(list string) (devs []int, all bool, err error) {
	if strings.TrimSpace(list) == devicesAll {
		return nil, true, nil
	}
	for _, x := range strings.Split(list, ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 || slices.Contains(devs, n) {
			return nil, false, usagef("-devices %q: want device indices, each once, or %s", list, devicesAll)
		}
		devs = append(devs, n)
	}
	return devs, false, nil
}

// familiesDefault is -families' default: off until interpolating
// signature families is checked on a GPU (docs/families.md). Making it
// the default is setting this true (-families=false then measures every
// signature).
const familiesDefault = false

// familiesFlag defines -families on fs, for kreplay run and predict.
func familiesFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("families", familiesDefault, "measure 5 members of each family of signatures that differ only in one size (a KV cache's length) and 2 more held out,\n"+
		"and interpolate the others' time and energy when the held-out ones agree with the fit (docs/families.md);\n"+
		"opt-in until validated on a GPU")
}

// sharedEnergyFlag is -shared-energy, which kreplay run and predict take
// (replay.SuiteOptions.SharedEnergy).
func sharedEnergyFlag(fs *flag.FlagSet) *int {
	return fs.Int("shared-energy", 0, fmt.Sprintf("with energy: measure the energy of the signatures under %d µs in windows shared by up to `N` of them (2 to %d;\n"+
		"0: a window each), split by their time, launches and class's power (docs/predict.md); one GPU only; opt-in until validated on a GPU",
		replay.SharedEnergyMaxNS/1000, replay.MaxSharedEnergy))
}

// checkSharedEnergy checks -shared-energy's value.
func checkSharedEnergy(n int) error {
	if n < 0 || n == 1 || n > replay.MaxSharedEnergy {
		return usagef("-shared-energy %d: want 0 (off) or 2 to %d", n, replay.MaxSharedEnergy)
	}
	return nil
}

// setRunner replays a set: one device, or a group of them.
type setRunner interface {
	RunSet(*signatures.Set, replay.SuiteOptions) []replay.Entry
}

// openDevices opens the devices to replay on and says what they are; the
// returned close releases them.
func openDevices(devices []int, stderr io.Writer) (setRunner, []*replay.Device, func(), error) {
	var runner setRunner
	var opened []*replay.Device
	var closeFn func()
	if len(devices) == 1 {
		dev, err := replay.Open(devices[0])
		if err != nil {
			return nil, nil, nil, err
		}
		runner, opened, closeFn = dev, []*replay.Device{dev}, func() { dev.Close() }
	} else {
		g, err := replay.OpenGroup(devices...)
		if err != nil {
			return nil, nil, nil, err
		}
		runner, opened, closeFn = g, g.Devices, func() { g.Close() }
	}
	for _, d := range opened {
		fmt.Fprintf(stderr, "device %d: %s, %d SMs, L2 %d MB, CUDA driver %d\n", d.Index, d.Name, d.SMs, d.L2Bytes>>20, d.DriverVersion)
		if d.Meter == nil {
			fmt.Fprintf(stderr, "kreplay run: no NVML on device %d (%v): clocks and throttling are not recorded\n", d.Index, d.NVMLErr)
		}
	}
	return runner, opened, closeFn, nil
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	f, pos, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	var measured *workload.Measured
	if f.measuredFile != "" {
		if measured, err = workload.ReadMeasured(f.measuredFile); err != nil {
			return err
		}
	}
	sets, bundleMeasured, bundle := runInputs(pos, stderr)
	if !f.binaries {
		for _, s := range sets {
			s.WithoutBinaries()
		}
	}
	if measured == nil && bundleMeasured != nil {
		measured, f.measuredFile = bundleMeasured, bundleMeasured.File
	}
	if f.skipped, err = parseSkip(f.skip, sets, f.binaries); err != nil {
		return err
	}
	if f.spread && len(sets) == 1 {
		if all := allLocalGPUs("run", stderr); all != nil {
			f.devices = all
		}
	}
	runner, opened, closeDevices, err := openDevices(f.devices, stderr)
	if err != nil && (len(f.devices) == 1 || isNoGPU(err)) {
		return noGPU(err) // as predict and whatif: a device that does not open is none
	}
	if err != nil {
		return err
	}
	for _, d := range opened {
		d.Tier3 = f.tier3
	}
	defer closeDevices()
	if f.roofline {
		f.peaks = devicePeaks(opened[0], stderr)
	}
	var idle []deviceIdle
	if f.energy {
		idle = measureIdle(opened, f.idle)
		for _, x := range idle {
			if x.Err != "" {
				fmt.Fprintf(stderr, "kreplay run: idle power of device %d: %s\n", x.Device, x.Err)
			} else {
				fmt.Fprintf(stderr, "device %d: idle %.1f W\n", x.Device, x.Watts)
			}
		}
	}
	var prog *progressFile
	previous := map[string]map[string]replay.Entry{}
	if f.progOut != "" {
		if f.resume {
			if previous, err = readProgress(f.progOut); err != nil {
				return err
			}
		}
		if prog, err = openProgress(f.progOut); err != nil {
			return err
		}
		defer prog.Close()
	}
	var rankSets []*signatures.Set
	var rankEntries [][]replay.Entry
	var outs []runOutput
	for _, set := range sets {
		prev := previous[set.Source.File]
		if !f.eachRank {
			prev = earlierRanks(outs, set, prev)
		}
		out, err := runOneSet(f, runner, opened[0], set, prev, prog, stdout, stderr)
		if err != nil {
			return err
		}
		outs = append(outs, out)
		if set.Source.WorldSize > 1 {
			rankSets, rankEntries = append(rankSets, set), append(rankEntries, out.Entries)
		}
	}
	// A replay that lost the CUDA context ends the run with an error,
	// after everything else is printed and written.
	lost := make([]error, len(opened))
	for i, d := range opened {
		if lost[i] = d.Lost(); lost[i] != nil && len(opened) > 1 {
			lost[i] = fmt.Errorf("GPU %d: %w", d.Index, lost[i])
		}
	}
	lostErr := lostError(lost, f.progOut != "")
	ranks, err := runRanks(rankSets, rankEntries, measured, bundleMeasured == nil, idle, stdout, stderr)
	var group *predict.GroupInference
	if err == nil && len(rankSets) > 1 && lostErr == nil && bundle.b != nil {
		if group, err = predict.PredictGroupFlow(bundle.arg, bundle.b, rankSets, rankEntries, opened, measured, stdout); err != nil {
			fmt.Fprintf(stderr, "kreplay run: %v\n", err)
			err = nil
		}
	}
	if err != nil || f.jsonOut == "" {
		return cmp.Or(err, lostErr)
	}
	var v any = outs
	if len(ranks) > 0 {
		v = struct {
			Sets     []runOutput              `json:"sets"`
			Ranks    []predict.RankPrediction `json:"ranks"`
			Whole    predict.SetPrediction    `json:"whole"`
			Group    *predict.GroupInference  `json:"group_inference,omitempty"`
			Idle     []deviceIdle             `json:"idle,omitempty"`
			Measured string                   `json:"measured,omitempty"`
		}{outs, ranks, predict.Whole(ranks), group, idle, f.measuredFile}
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return cmp.Or(atomicfile.WriteBytes(f.jsonOut, b), lostErr)
}

// runOneSet replays one set, recording each result in prog as it comes,
// and prints its table and coverage.
func runOneSet(f *runFlags, runner setRunner, dev *replay.Device, set *signatures.Set, prev map[string]replay.Entry,
	prog *progressFile, stdout, stderr io.Writer) (runOutput, error) {
	if f.ids != "" {
		set = filterIDs(set, strings.Split(f.ids, ","))
	}
	reusedNote(stderr, set, prev, f.progOut)
	src := set.Source
	entries := runner.RunSet(set, replay.SuiteOptions{
		Tiers: f.tiers, Cache: f.cache, Progress: stderr, Previous: prev, Measure: f.measure, EnergyShare: f.energyShare, Skip: f.skipped,
		Families: f.families, SharedEnergy: f.sharedEnergy,
		Done: func(e replay.Entry) {
			if prog != nil && e.Result != nil && prev[e.ID].Result != e.Result {
				if err := prog.add(src, e); err != nil {
					fmt.Fprintf(stderr, "kreplay run: %s: %v\n", f.progOut, err)
				}
			}
		},
	})
	fmt.Fprintf(stdout, "%s (%s) on %s, cache %s\n", set.Source.File, set.Source.Workload, dev.Name, f.cache)
	if err := predict.WriteTable(stdout, entries); err != nil {
		return runOutput{}, err
	}
	tc := predict.CoverTiers(entries, f.tolerance)
	if err := predict.WriteCoverage(stdout, tc); err != nil {
		return runOutput{}, err
	}
	fmt.Fprintln(stdout)
	cov := map[string]predict.Coverage{}
	for _, c := range tc {
		cov[c.Name] = c.Coverage
	}
	out := runOutput{Device: dev.Name, Driver: dev.DriverVersion, Set: set.Source, Cache: f.cache.String(), Entries: entries, Coverage: cov}
	if f.peaks != nil {
		out.Peaks, out.Roofline = f.peaks, roofline.EntryRows(f.peaks, set, entries)
		fmt.Fprintf(stdout, "roofline: peaks %s\n%s\n", f.peaks.Summary(), roofline.Rule)
		if err := roofline.WriteTable(stdout, out.Roofline); err != nil {
			return runOutput{}, err
		}
		fmt.Fprintln(stdout)
	}
	return out, nil
}

// devicePeaks are d's peaks for -roofline (roofline.ForDevice, its mode
// from roofline.EnvPeaks), or nil, with where they came from or why there
// are none on stderr.
func devicePeaks(d *replay.Device, stderr io.Writer) *roofline.Peaks {
	o, err := roofline.OptionsFromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "kreplay run: -roofline: %v\n", err)
		return nil
	}
	p, note, err := roofline.ForDevice(d, o)
	if err != nil {
		fmt.Fprintf(stderr, "kreplay run: -roofline: peaks not measured: %v\n", err)
		return nil
	}
	fmt.Fprintf(stderr, "device %d: peaks %s\n", d.Index, note)
	return p
}

// runRanks predicts each rank of a multi-rank run, compares it with the
// measured runs where given, and prints the table. explicit says the
// measured runs came from -measured rather than a bundle.
func runRanks(sets []*signatures.Set, entries [][]replay.Entry, measured *workload.Measured, explicit bool, idle []deviceIdle,
	stdout, stderr io.Writer) ([]predict.RankPrediction, error) {
	if len(sets) < 2 {
		if measured != nil && explicit {
			fmt.Fprintf(stderr, "kreplay run: -measured: only the ranks of a multi-rank run (one trace per rank) are compared\n")
		}
		return nil, nil
	}
	ranks, err := predict.PredictRanks(sets, entries)
	if err != nil {
		fmt.Fprintf(stderr, "kreplay run: ranks: %v\n", err)
		return nil, nil
	}
	if measured != nil {
		fmt.Fprintf(stderr, "kreplay run: measured runs from %s\n", measured.File)
		for _, w := range compareMeasured(ranks, sets, measured, idle) {
			fmt.Fprintf(stderr, "kreplay run: %s\n", w)
		}
	}
	fmt.Fprintln(stdout, "per rank: predicted compute + communication against traced busy time less waiting for other ranks")
	return ranks, predict.WriteRanks(stdout, ranks)
}

// runInputs loads the sets of the TRACE arguments, reporting those that
// fail on stderr, and returns the first bundle's measured runs, if any,
// and that bundle (with the argument that named it).
func runInputs(pos []string, stderr io.Writer) ([]*signatures.Set, *workload.Measured, namedBundle) {
	var sets []*signatures.Set
	var measured *workload.Measured
	var first namedBundle
	for _, p := range pos {
		in, err := loadInput(p, signatures.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "kreplay run: %v\n", err)
			continue
		}
		sets = append(sets, in.sets...)
		if first.b == nil && in.bundle != nil {
			first = namedBundle{p, in.bundle}
			if measured, err = in.bundle.Measured(); err != nil {
				fmt.Fprintf(stderr, "kreplay run: %v\n", err)
			}
		}
	}
	return sets, measured, first
}

// namedBundle is a bundle with the argument that named it.
type namedBundle struct {
	arg string
	b   *workload.Bundle
}

// filterIDs keeps the named signatures and those that are part of them.
func filterIDs(set *signatures.Set, ids []string) *signatures.Set {
	keep := map[string]bool{}
	for _, id := range ids {
		keep[strings.TrimSpace(id)] = true
	}
	out := *set
	out.Signatures = nil
	for _, s := range set.Signatures {
		if keep[s.ID] || keep[s.PartOf] {
			out.Signatures = append(out.Signatures, s)
		}
	}
	return &out
}

// deviceIdle is a GPU's idle power, measured before a run with -energy.
type deviceIdle struct {
	Device int     `json:"device"`
	Watts  float64 `json:"watts"`
	Err    string  `json:"error,omitempty"`
}

// measureIdle measures every device's idle power at once, over window.
func measureIdle(devs []*replay.Device, window time.Duration) []deviceIdle {
	out := make([]deviceIdle, len(devs))
	var wg sync.WaitGroup
	for i, d := range devs {
		out[i].Device = d.Index
		if d.Meter == nil {
			out[i].Err = fmt.Sprintf("no NVML: %v", d.NVMLErr)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := d.Meter.IdlePower(context.Background(), window)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].Watts = r.Watts
		}()
	}
	wg.Wait()
	return out
}

// compareMeasured sets each rank's measured wall time and energy from the
// run of its set's workload and rank, with the idle power of the GPU of
// the same rank (idle[rank], when measured), and returns what could not be
// matched.
func compareMeasured(ranks []predict.RankPrediction, sets []*signatures.Set, m *workload.Measured, idle []deviceIdle) []string {
	var warn []string
	for i := range ranks {
		src := sets[i].Source
		run, err := m.Lookup(src.Workload, src.Rank, src.WorldSize)
		if err != nil {
			warn = append(warn, err.Error())
			continue
		}
		w := 0.0
		if r := ranks[i].Rank; r >= 0 && r < len(idle) && idle[r].Err == "" {
			w = idle[r].Watts
		} else if len(idle) > 0 {
			warn = append(warn, fmt.Sprintf("rank %d: no idle power measured for its GPU; its idle energy is left out", ranks[i].Rank))
		}
		ranks[i].Compare(run, w)
	}
	return warn
}
