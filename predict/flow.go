package predict

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/bench"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/schedule"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
	"github.com/kreplay/kreplay/workload"
)

// FlowOptions tune Flow.
type FlowOptions struct {
	// Device is the CUDA device index.
	Device int
	// Devices, when it names more than one, spreads the signature
	// replays over these GPUs (replay.Group.RunSet; they must be of one
	// kind and driver), each signature measured on one of them; the
	// timeline, the host probe and the peaks run on the first. Device is
	// then unused.
	Devices []int
	// NoBinaries replays the set as its plain trace would, by tier
	// (signatures.Set.WithoutBinaries, applied to set).
	NoBinaries bool
	// Cache is the L2 cache mode of the signature replays
	// (replay.DefaultCacheMode when zero).
	Cache replay.CacheMode
	// Measure are the measurement options (Energy among them).
	Measure replay.Options
	// Tier3 is how tier 3 replays where a choice is a guess
	// (replay.Device.Tier3).
	Tier3 tier3.Config
	// SignatureEnergy says whether each signature's replay measures its
	// own energy window (SignatureEnergyAuto where zero): with Measure.Energy
	// off none does; with it on, SignatureEnergyOff and an auto that
	// finds the energy can be in place replay the signatures for times
	// only, while the host probe's waiting power and the timelines'
	// energies are still measured, and the inference's energy is in place
	// or none (Inference.NoIsolated).
	SignatureEnergy SignatureEnergy
	// EnergyShare limits the energy windows to the largest signatures
	// (replay.SuiteOptions.EnergyShare).
	EnergyShare float64
	// SharedEnergy measures short signatures' energy in shared windows
	// (replay.SuiteOptions.SharedEnergy; one GPU only).
	SharedEnergy int
	// Families measures some members of each signature family and
	// interpolates the rest (replay.SuiteOptions.Families).
	Families bool
	// NoTimeline and NoModel skip the timeline replay and the full-model
	// run.
	NoTimeline, NoModel bool
	// TimelineDataFlow replays the timeline, and the paced pass with it,
	// on the recorded data flow (replay.TimelineOptions.DataFlow); the
	// paced pass's energy is then not used for the inference's.
	TimelineDataFlow bool
	// ModelTicks is the model's energy window in NVML counter ticks
	// (default 20).
	ModelTicks int
	// Spec is the workload the full-model run runs; nil runs the spec
	// the set's workload name gives, if any (bench.ModelSpec).
	Spec *workload.Spec
	// Measured, when set, stands for the full-model run instead of
	// running it: a run measured before, such as a bundle's
	// measured.json holds (kreplay capture measured it, without the
	// profiler, when it captured the trace). MeasuredFrom names it.
	Measured     *runner.Result
	MeasuredFrom string
	// Peaks says how the GPU's peaks, written as configuration lines for
	// the report's roofline, are had (roofline.ForDevice: from the cache,
	// measured again, or not at all).
	Peaks roofline.Options
	// Progress receives a line per step and per signature.
	Progress io.Writer
	// Previous and Done resume an interrupted run: signatures with a
	// result in Previous (by ID) are not measured again, and Done gets
	// each entry as soon as it is measured (replay.SuiteOptions).
	Previous map[string]replay.Entry
	Done     func(replay.Entry)
	// Schedule is the workload's host schedule (a bundle's, or
	// schedule.FromTrace of its trace: a guess). With it Flow also probes
	// the host's launch path and the GPU's power while it waits on this
	// GPU (replay.MeasureHost) and predicts the whole inference
	// (PredictInference); Runtime orders the trace's launches for it (nil:
	// the timeline's order, one stream only), HostProbe tunes the probe.
	Schedule  *schedule.Schedule
	Runtime   *signatures.Runtime
	HostProbe replay.HostProbeOptions
	// Skip leaves signatures out of the replays and the timeline, by ID,
	// each with the reason their entry and the timeline's skips give
	// (replay.SuiteOptions.Skip).
	Skip map[string]string
}

// FlowResult is what Flow measured. A step that failed has its error and
// leaves the others standing.
type FlowResult struct {
	Set *signatures.Set
	GPU string
	// Config is what the replays ran on (replay.Device.Config) and the
	// GPU's peaks (roofline.Peaks.Config), written as the benchmark
	// output's configuration lines.
	Config []replay.ConfigItem
	// Peaks are the GPU's peaks; nil when FlowOptions.Peaks turned them
	// off or they could not be measured (Flow's progress says why).
	Peaks *roofline.Peaks
	// Entries are the signature replays (replay.Device.RunSet).
	Entries []replay.Entry
	// Lost, when not nil, is a *replay.ContextLostError: a replay
	// faulted and lost the CUDA context (replay.Device.Lost), the
	// signatures after it were not measured and the timeline did not run.
	Lost error
	// Timeline is the timeline replay, or TimelineErr why there is none.
	Timeline    *replay.TimelineResult
	TimelineErr error
	// Paced is the timeline launched from the host at the recorded
	// schedule's pacing (the whole-inference model's independent check),
	// PacedInference the schedule's inference it paces; PacedErr why there
	// is none (nil without a recorded schedule).
	Paced          *replay.PacedResult
	PacedInference int
	PacedErr       error
	// Host is the host probe and Inference the whole inference predicted
	// from FlowOptions.Schedule; InferenceErr says why there is none.
	Host         *replay.HostProbe
	Inference    *Inference
	InferenceErr error
	// Model is the full-model run, or ModelErr why there is none;
	// ModelFrom says where it came from ("" for a run made by Flow).
	Model     *runner.Result
	ModelErr  error
	ModelFrom string
}

// Flow runs on one GPU what `go test -bench` runs in a generated
// benchmark package: every signature of set replayed alone
// (BenchmarkReplay), the whole timeline (BenchmarkTimeline) and the real
// inference through the PyTorch runner (BenchmarkModel), in that order.
// It fails only when the GPU cannot be opened; a signature, the timeline
// or the model that fails is recorded and the rest goes on, except that a
// replay that loses the CUDA context (FlowResult.Lost) ends the replays
// and the timeline. Write the result with WriteBench and read it back
// with ReadResults or Report.
func Flow(set *signatures.Set, o FlowOptions) (*FlowResult, error) {
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	if o.NoBinaries {
		set.WithoutBinaries()
	}
	g, err := openFlowDevices(o)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	d := g.Devices[0]
	fr := &FlowResult{Set: set, GPU: d.Name, Config: d.Config()}
	if p, note, err := roofline.ForDevice(d, o.Peaks); err != nil {
		fmt.Fprintf(progress, "peaks: not measured: %v\n", err)
	} else {
		fmt.Fprintf(progress, "peaks: %s\n", note)
		if p != nil {
			fmt.Fprintf(progress, "peaks: %s\n", p.Summary())
			fr.Peaks, fr.Config = p, append(fr.Config, p.Config()...)
		}
	}
	start := time.Now()
	if _, line := o.signatureWindows(); line != "" {
		fmt.Fprintf(progress, "energy: %s\n", line)
	}
	fmt.Fprintf(progress, "replay: %d signatures of %s on %s\n", len(set.Signatures), bench.Workload(set.Source), gpusOf(g))
	fr.Entries, fr.Lost = runFlowSet(g, set, o.suiteOptions(progress))
	if o.Schedule != nil {
		fr.inference(d, o, progress)
	}
	switch {
	case o.NoTimeline:
	case fr.Lost != nil:
		fr.TimelineErr = fmt.Errorf("not run: %w", fr.Lost)
		fmt.Fprintf(progress, "timeline: %v\n", fr.TimelineErr)
	default:
		fmt.Fprintf(progress, "timeline: every invocation in order, one CUDA graph (%s so far)\n", time.Since(start).Round(time.Second))
		fr.timelines(d, o, progress)
	}
	if !o.NoModel {
		fr.model(o, progress, start)
	}
	fmt.Fprintf(progress, "done in %s\n", time.Since(start).Round(time.Second))
	return fr, nil
}

// model runs the workload for real, or takes the measured run instead.
func (fr *FlowResult) model(o FlowOptions, progress io.Writer, start time.Time) {
	if o.Measured != nil {
		fr.Model, fr.ModelFrom = o.Measured, o.MeasuredFrom
		fmt.Fprintf(progress, "model: the run measured before, from %s: %.4g ms, %.4g J per inference\n",
			o.MeasuredFrom, o.Measured.WallSPerInference*1e3, o.Measured.EnergyJPerInference)
		if sp := o.Measured.Spread(); sp != "" {
			fmt.Fprintf(progress, "model: its inferences' spans on the GPU: %s\n", sp)
		}
		return
	}
	fmt.Fprintf(progress, "model: the real inference (%s so far)\n", time.Since(start).Round(time.Second))
	spec := o.Spec
	if spec == nil {
		if spec, fr.ModelErr = bench.ModelSpec(fr.Set, nil); fr.ModelErr != nil {
			fmt.Fprintf(progress, "model: %v\n", fr.ModelErr)
			return
		}
	}
	fr.Model, fr.ModelErr = workload.Measure(spec, o.ModelTicks, progress)
	if fr.ModelErr != nil {
		fmt.Fprintf(progress, "model: %v\n", fr.ModelErr)
	}
}

// WriteBench writes fr in the Go benchmark format under the names of the
// generated benchmarks (BenchmarkReplay/workload=W/sig=ID and the
// timeline and model siblings), with pkg as the "pkg" configuration, so
// that ReadResults, `kreplay report` and benchstat read it as they read
// `go test -bench` output. A signature without a result is written as a
// "--- SKIP" line with its reason, as `go test -v` prints skips.
func (fr *FlowResult) WriteBench(w io.Writer, pkg string) error {
	workload := bench.Workload(fr.Set.Source)
	bw := benchfmt.NewWriter(w)
	cfg := []benchfmt.Config{
		{Key: "goos", Value: []byte(runtime.GOOS), File: true},
		{Key: "goarch", Value: []byte(runtime.GOARCH), File: true},
		{Key: "pkg", Value: []byte(pkg), File: true},
	}
	items := fr.Config
	if len(items) == 0 {
		items = []replay.ConfigItem{{Key: "gpu", Value: fr.GPU}}
	}
	items = append(items, bench.TraceConfig(fr.Set))
	var machine []replay.ConfigItem
	for _, c := range items {
		if bench.IsMachineKey(c.Key) {
			machine = append(machine, c) // machine lines, ahead of the results
			continue
		}
		cfg = append(cfg, benchfmt.Config{Key: c.Key, Value: []byte(c.Value), File: true})
	}
	bench.WriteConfig(w, machine)
	suffix := ""
	if p := runtime.GOMAXPROCS(0); p > 1 {
		suffix = fmt.Sprintf("-%d", p)
	}
	write := func(name string, v []benchfmt.Value) error {
		return bw.Write(&benchfmt.Result{Config: cfg, Name: benchfmt.Name(name + suffix), Iters: 1, Values: v})
	}
	var skips []string
	for i := range fr.Entries {
		e := &fr.Entries[i]
		name := bench.ReplayName + "/" + bench.SignatureName(workload, e.ID)
		switch {
		case e.PartOf != "":
			skips = append(skips, skipLineText(name, "part of "+e.PartOf+": replayed and timed with it"))
		case e.Result == nil:
			reason := e.Err
			if reason == "" {
				reason = "not replayed"
			}
			skips = append(skips, skipLineText(name, reason))
		default:
			if err := write(name, bench.SignatureMetrics(e.Result)); err != nil {
				return err
			}
			f := bench.FidelityOf(e.Result)
			f.Interpolated = e.Interpolated != ""
			skips = append(skips, bench.FidelityLine("Benchmark"+name, f)+"\n")
		}
	}
	if fr.Timeline != nil {
		for _, c := range fr.Timeline.Context {
			v := []benchfmt.Value{{Value: c.MedianNS, Unit: "ns/op"}}
			if err := write(bench.ContextName+"/"+bench.SignatureName(workload, c.ID), v); err != nil {
				return err
			}
		}
		if err := write(bench.TimelineName+"/"+bench.TimelineBenchName(workload), bench.TimelineMetrics(fr.Timeline)); err != nil {
			return err
		}
	}
	if fr.Inference != nil {
		if err := write(bench.InferenceName+"/"+InferenceBenchName(workload), fr.Inference.Metrics()); err != nil {
			return err
		}
		switch {
		case fr.Inference.NoEnergy != "":
			skips = append(skips, noEnergyLine(workload, fr.Inference.NoEnergy))
		case fr.Inference.EnergyDesign == EnergyIsolated:
			skips = append(skips, notInPlaceLine(workload, fr.Inference.NotInPlace))
		}
	}
	if fr.Paced != nil {
		if err := write(bench.PacedName+"/workload="+workload+"/paced", pacedMetrics(fr.Paced)); err != nil {
			return err
		}
	}
	if fr.Model != nil {
		if err := write(bench.ModelName+"/"+bench.ModelBenchName(workload), bench.ModelMetrics(fr.Model)); err != nil {
			return err
		}
	} else if fr.ModelErr != nil {
		skips = append(skips, bench.NoModelLine("Benchmark"+bench.ModelName+"/"+bench.ModelBenchName(workload), fr.ModelErr.Error())+"\n")
	}
	for _, s := range skips {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

// skipLineText is a skip as `go test -v` prints it, which ReadResults
// reads back as the signature's reason for being missing.
func skipLineText(name, reason string) string {
	return fmt.Sprintf("--- SKIP: Benchmark%s\n    flow.go:1: %s\n", name, reason)
}

// ErrNoGPU wraps Flow's error when no GPU could be opened.
var ErrNoGPU = errors.New("no usable GPU")

// timelineGap is the idle time the timeline replay leaves after each
// launch, so that the power limiter sees the real run's duty: the
// predicted inference's GPU idle time where there is one, else the
// measured run's wall time less the trace's busy time, else 0.
func (fr *FlowResult) timelineGap(measured *runner.Result) time.Duration {
	if fr.Inference != nil {
		return time.Duration(max(0, fr.Inference.WallNS-fr.Inference.BusyNS))
	}
	set := fr.Set
	if measured == nil || measured.WallSPerInference <= 0 {
		return 0
	}
	var busy int64
	for _, d := range set.Summary {
		busy += d.BusyNS
	}
	return max(0, time.Duration(measured.WallSPerInference*1e9)-time.Duration(busy))
}

// suiteOptions are the options of the signature replays: o's cache mode
// as given (the zero value is replay's default), measurement options
// (energy only where the signatures get their own windows:
// signatureWindows), energy share, progress and the entries to keep or
// skip.
func (o FlowOptions) suiteOptions(progress io.Writer) replay.SuiteOptions {
	m := o.Measure
	m.Energy, _ = o.signatureWindows()
	return replay.SuiteOptions{Cache: o.Cache, Measure: m, EnergyShare: o.EnergyShare, Progress: progress,
		Previous: o.Previous, Done: o.Done, Skip: o.Skip, Families: o.Families, SharedEnergy: o.SharedEnergy}
}
