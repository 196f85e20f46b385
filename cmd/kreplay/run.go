package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// runOutput is what `kreplay run -json` writes: per set, the entries and
// the coverage by tier.
type runOutput struct {
	Device   string            `json:"device"`
	Driver   int               `json:"cuda_driver"`
	Set      signatures.Source `json:"set"`
	Cache    string            `json:"cache"`
	Entries  []replay.Entry    `json:"entries"`
	Coverage map[string]replay.Coverage
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	tiersFlag := fs.String("tiers", "1,2,3", "replay only these `TIERS` (comma-separated)")
	cacheFlag := fs.String("cache", "auto", "L2 cache `MODE`: auto (weights rotate, layer norm cold, other tier-3 kernels primed, the rest warm), rotating, warm, cold or primed")
	idsFlag := fs.String("ids", "", "replay only these signature `IDS` (comma-separated)")
	budget := fs.Duration("budget", 2*time.Second, "time `BUDGET` per signature")
	warmup := fs.Duration("warmup", 20*time.Millisecond, "launch for `DURATION` before timing each signature")
	minTime := fs.Duration("mintime", 0, "sample each signature for at least `DURATION`")
	pause := fs.Duration("pause", 50*time.Millisecond, "idle `PAUSE` before each signature, so the power state of the last does not carry over")
	cooldown := fs.Duration("cooldown", 0, "idle `PAUSE` between samples (keeps heavy kernels off the power cap)")
	target := fs.Float64("ci", 0.01, "stop sampling at this relative confidence-interval half-width")
	graph := fs.Bool("graph", true, "time batches captured in a CUDA graph (false: direct launches)")
	withEnergy := fs.Bool("energy", false, "also measure energy per invocation with NVML (about 11 s per signature with the default -ticks)")
	ticks := fs.Int("ticks", 0, "NVML energy-counter `TICKS` per energy window (default 101: one tick under 1%)")
	energyWarmup := fs.Duration("energywarmup", time.Second, "with -energy: launch for `DURATION` before each energy window opens (steady-state power and clocks)")
	kernels := fs.Bool("kernels", true, "time the kernels and record which ran, with CUPTI")
	devIndex := fs.Int("device", 0, "CUDA device `INDEX`")
	devList := fs.String("devices", "", "replay on these CUDA `DEVICES` (comma-separated): signatures are spread over them, and the collectives of one trace per rank run across them through NCCL")
	jsonOut := fs.String("json", "", "write the results as JSON to `FILE`")
	progOut := fs.String("out", "", "append each signature's result to `FILE` (JSON lines) as soon as it is measured")
	resume := fs.Bool("resume", false, "with -out: reuse the results already in the file and measure only the rest")
	tol := fs.Float64("tolerance", 0.10, "ratio tolerance for the within-tolerance share")
	measuredFlag := fs.String("measured", "", "compare the per-rank prediction with the runs in `FILE` (the format of measured.json: wall time and energy per inference, by workload and rank;\ndefault: the bundle's own)")
	binaries := fs.Bool("binaries", true, "replay a bundle's signatures by their captured kernel binaries where recorded (false: as for a plain trace)")
	idleWin := fs.Duration("idle", time.Second, "with -energy: measure each GPU's idle power over `DURATION` before the run (the idle term of the energy prediction)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	var measured *replay.Measured
	if *measuredFlag != "" {
		if measured, err = replay.ReadMeasured(*measuredFlag); err != nil {
			return err
		}
	}
	if len(pos) == 0 {
		pos = []string{defaultInput}
	}
	sets, bundleMeasured := runInputs(pos, stderr)
	if !*binaries {
		for _, s := range sets {
			s.WithoutBinaries()
		}
	}
	if measured == nil && bundleMeasured != nil {
		measured = bundleMeasured
		*measuredFlag = measured.File
	}
	var tiers []signatures.Tier
	for _, f := range strings.Split(*tiersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 3 {
			return fmt.Errorf("-tiers %q: want numbers 1 to 3", *tiersFlag)
		}
		tiers = append(tiers, signatures.Tier(n))
	}
	cache, err := replay.ParseCacheMode(*cacheFlag)
	if err != nil {
		return err
	}
	var devices []int
	for _, f := range strings.Split(*devList, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return fmt.Errorf("-devices %q: want device indices", *devList)
		}
		devices = append(devices, n)
	}
	if len(devices) == 0 {
		devices = []int{*devIndex}
	}
	var runner interface {
		RunSet(*signatures.Set, replay.SuiteOptions) []replay.Entry
	}
	var opened []*replay.Device
	if len(devices) == 1 {
		dev, err := replay.Open(devices[0])
		if err != nil {
			return err
		}
		defer dev.Close()
		runner, opened = dev, []*replay.Device{dev}
	} else {
		g, err := replay.OpenGroup(devices...)
		if err != nil {
			return err
		}
		defer g.Close()
		runner, opened = g, g.Devices
	}
	for _, d := range opened {
		fmt.Fprintf(stderr, "device %d: %s, %d SMs, L2 %d MB, CUDA driver %d\n", d.Index, d.Name, d.SMs, d.L2Bytes>>20, d.DriverVersion)
		if d.Meter == nil {
			fmt.Fprintf(stderr, "kreplay run: no NVML on device %d (%v): clocks and throttling are not recorded\n", d.Index, d.NVMLErr)
		}
	}
	dev := opened[0]
	var idle []deviceIdle
	if *withEnergy {
		idle = measureIdle(opened, *idleWin)
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
	if *progOut != "" {
		if *resume {
			if previous, err = readProgress(*progOut); err != nil {
				return err
			}
		}
		if prog, err = openProgress(*progOut); err != nil {
			return err
		}
		defer prog.Close()
	} else if *resume {
		return fmt.Errorf("-resume needs -out FILE")
	}
	var rankSets []*signatures.Set
	var rankEntries [][]replay.Entry
	var outs []runOutput
	for _, set := range sets {
		if *idsFlag != "" {
			set = filterIDs(set, strings.Split(*idsFlag, ","))
		}
		prev := previous[set.Source.File]
		if len(prev) > 0 {
			fmt.Fprintf(stderr, "kreplay run: %s: %d results from %s reused\n", set.Source.File, len(prev), *progOut)
		}
		src := set.Source
		entries := runner.RunSet(set, replay.SuiteOptions{
			Tiers: tiers, Cache: cache, Progress: stderr, Previous: prev,
			Done: func(e replay.Entry) {
				if prog != nil && e.Result != nil && prev[e.ID].Result != e.Result {
					if err := prog.add(src, e); err != nil {
						fmt.Fprintf(stderr, "kreplay run: %s: %v\n", *progOut, err)
					}
				}
			},
			Measure: replay.Options{Budget: *budget, TargetRelCI: *target, NoKernelTime: !*kernels, Warmup: *warmup, MinTime: *minTime, NoGraph: !*graph, Cooldown: *cooldown, Pause: *pause,
				Energy: *withEnergy, EnergyTicks: *ticks, EnergyWarmup: *energyWarmup},
		})
		fmt.Fprintf(stdout, "%s (%s) on %s, cache %s\n", set.Source.File, set.Source.Workload, dev.Name, cache)
		if err := replay.WriteTable(stdout, entries); err != nil {
			return err
		}
		cov := map[string]replay.Coverage{}
		for _, t := range []struct {
			name  string
			tiers []signatures.Tier
		}{{"tier1", []signatures.Tier{1}}, {"tier2", []signatures.Tier{2}}, {"tier3", []signatures.Tier{3}}, {"tier1+2", []signatures.Tier{1, 2}}, {"all", nil}} {
			c := replay.Cover(entries, *tol, t.tiers...)
			if c.TracedNS == 0 {
				continue
			}
			cov[t.name] = c
			fmt.Fprintf(stdout, "%-8s traced %.3f ms: replayed %.1f%% (approximate %.1f%%), same kernel %.1f%%, within ±%.0f%% %.1f%%, %d errors\n",
				t.name, float64(c.TracedNS)/1e6, 100*c.ReplayedShare, 100*c.ApproximateShare, 100*c.SameKernelShare, 100*c.Tolerance, 100*c.WithinShare, c.Errors)
		}
		fmt.Fprintln(stdout)
		outs = append(outs, runOutput{Device: dev.Name, Driver: dev.DriverVersion, Set: set.Source, Cache: cache.String(), Entries: entries, Coverage: cov})
		if set.Source.WorldSize > 1 {
			rankSets, rankEntries = append(rankSets, set), append(rankEntries, entries)
		}
	}
	var ranks []replay.RankPrediction
	if len(rankSets) > 1 {
		if ranks, err = replay.PredictRanks(rankSets, rankEntries); err != nil {
			fmt.Fprintf(stderr, "kreplay run: ranks: %v\n", err)
		} else {
			if measured != nil {
				fmt.Fprintf(stderr, "kreplay run: measured runs from %s\n", measured.File)
				for _, w := range compareMeasured(ranks, rankSets, measured, idle) {
					fmt.Fprintf(stderr, "kreplay run: %s\n", w)
				}
			}
			fmt.Fprintln(stdout, "per rank: predicted compute + communication against traced busy time less waiting for other ranks")
			if err := replay.WriteRanks(stdout, ranks); err != nil {
				return err
			}
		}
	} else if measured != nil && bundleMeasured == nil {
		fmt.Fprintf(stderr, "kreplay run: -measured: only the ranks of a multi-rank run (one trace per rank) are compared\n")
	}
	if *jsonOut != "" {
		var v any = outs
		if len(ranks) > 0 {
			v = struct {
				Sets     []runOutput             `json:"sets"`
				Ranks    []replay.RankPrediction `json:"ranks"`
				Whole    replay.SetPrediction    `json:"whole"`
				Idle     []deviceIdle            `json:"idle,omitempty"`
				Measured string                  `json:"measured,omitempty"`
			}{outs, ranks, replay.Whole(ranks), idle, *measuredFlag}
		}
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(*jsonOut, b, 0o644)
	}
	return nil
}

// runInputs loads the sets of the TRACE arguments, reporting those that
// fail and going on, and returns the measured runs of the first bundle
// that has them.
func runInputs(pos []string, stderr io.Writer) ([]*signatures.Set, *replay.Measured) {
	var sets []*signatures.Set
	var measured *replay.Measured
	for _, p := range pos {
		in, err := loadInput(p, signatures.Options{})
		if err != nil {
			fmt.Fprintf(stderr, "kreplay run: %v\n", err)
			continue
		}
		sets = append(sets, in.sets...)
		if measured == nil && in.bundle != nil {
			if measured, err = in.bundle.Measured(); err != nil {
				fmt.Fprintf(stderr, "kreplay run: %v\n", err)
			}
		}
	}
	return sets, measured
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
func compareMeasured(ranks []replay.RankPrediction, sets []*signatures.Set, m *replay.Measured, idle []deviceIdle) []string {
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
