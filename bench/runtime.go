package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/textfmt"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/roofline"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// Environment variables the benchmarks read.
const (
	// EnvEnergy set to 1 measures each signature's energy per invocation
	// too (replay.Options.Energy: a window of NVML counter ticks after a
	// warm-up, about 11 s per signature) and reports J/op and W.
	EnvEnergy = "KREPLAY_ENERGY"
	// EnvEnergyTicks sets the NVML counter ticks of each signature's
	// energy window (replay.Options.EnergyTicks; default 101, one tick
	// under 1% of the window's energy; reads are aligned to counter
	// changes at both ends, so fewer ticks mostly cost repeatability).
	EnvEnergyTicks = "KREPLAY_ENERGY_TICKS"
	// EnvEnergyDuty=0 keeps the back-to-back energy of a signature whose
	// window ran power-capped (replay.Options.NoEnergyDuty); by default it
	// is measured again duty-cycled under the cap.
	EnvEnergyDuty = "KREPLAY_ENERGY_DUTY"
	// EnvCache names the L2 cache mode: rotating, warm, cold, primed,
	// auto, context or default (replay.DefaultCacheMode; see
	// replay.CacheMode).
	EnvCache = "KREPLAY_CACHE"
	// EnvCausalScores=0 feeds a softmax over square scores uniform
	// inputs instead of causally masked ones (tier3.Config.UniformScores; the default is a guess
	// that holds for causal language models' prefill).
	EnvCausalScores = "KREPLAY_CAUSAL_SCORES"
)

// Options configure the measurements of a generated package's benchmarks
// (Replay, Signature, TimelineBench, Timeline). The zero value gives the
// defaults; the environment variables above override the fields they
// name.
type Options struct {
	// Measure are the options of every measurement; EnvEnergy turns on
	// Measure.Energy, EnvEnergyTicks sets Measure.EnergyTicks and
	// EnvEnergyDuty=0 Measure.NoEnergyDuty.
	Measure replay.Options
	// Cache is the L2 cache mode of the signatures' measurements (zero:
	// replay.DefaultCacheMode, as `kreplay run`'s); EnvCache overrides it.
	Cache replay.CacheMode
	// Tier3 is how tier 3 replays where a choice is a guess;
	// EnvCausalScores=0 sets Tier3.UniformScores.
	Tier3 tier3.Config
}

// The device is opened once per test binary, on first use, and shared by
// all its benchmarks. It is not closed: the process's exit releases it.
var shared struct {
	once sync.Once
	r    replayer
	err  error
}

func sharedReplayer() (replayer, error) {
	shared.once.Do(func() {
		d, err := replay.Open(0)
		if err != nil {
			shared.err = err
			if !gputest.Required() {
				fmt.Println(NoGPULine(err.Error())) // once: go test shows skips only with -v
			}
			return
		}
		shared.r = deviceReplayer{d}
		// What the measurements run on, as configuration lines ahead of
		// the results, so that benchstat -col gpu (or driver, cublas, ...)
		// tells runs apart; and the GPU's peaks, for kreplay report's
		// roofline. What belongs to the one GPU (its UUID, its peaks) goes
		// in machine lines (WriteConfig).
		WriteConfig(os.Stdout, d.Config())
		WritePeaks(os.Stdout, d)
	})
	return shared.r, shared.err
}

// NoGPULine is the line the benchmarks print once, on standard output,
// when they find no usable GPU and skip: go test shows it without -v,
// where their skips would leave only "PASS". It is not a benchfmt
// configuration line (its key would hold a space), so benchfmt and
// benchstat pass over it.
func NoGPULine(reason string) string {
	return "kreplay benchmarks: no usable GPU, the replay and timeline benchmarks skip (" + gputest.Env + "=1 fails them instead): " +
		textfmt.OneLine(reason, 400)
}

// WritePeaks writes d's peaks (roofline.ForDevice: cached per device,
// measured on first use; roofline.EnvPeaks=off leaves them out, =refresh
// measures them again) as machine lines (WriteConfig), so that kreplay report
// places each signature on the roofline from the output alone. A line
// before them, which benchfmt passes over, says where they came from or
// why there are none: "kreplay peaks: NOTE".
func WritePeaks(w io.Writer, d *replay.Device) {
	o, err := roofline.OptionsFromEnv()
	if err != nil {
		fmt.Fprintf(w, "kreplay peaks: not measured: %v\n", err)
		return
	}
	p, note, err := roofline.ForDevice(d, o)
	if err != nil {
		fmt.Fprintf(w, "kreplay peaks: not measured: %s\n", textfmt.OneLine(err.Error(), 400))
		return
	}
	fmt.Fprintf(w, "kreplay peaks: %s\n", textfmt.OneLine(note, 400))
	if p != nil {
		WriteConfig(w, p.Config())
	}
}

// WriteConfig writes config items as benchfmt configuration lines
// ("key: value"), but those of the one machine (IsMachineKey) as machine
// lines ("# key: value", MachinePrefix), which benchfmt passes over.
func WriteConfig(w io.Writer, items []replay.ConfigItem) {
	for _, c := range items {
		prefix := ""
		if IsMachineKey(c.Key) {
			prefix = MachinePrefix
		}
		fmt.Fprintf(w, "%s%s: %s\n", prefix, c.Key, strings.ReplaceAll(c.Value, "\n", " "))
	}
}

// TraceConfig is the configuration line of where a set was traced,
// "trace-gpu: NAME" (or "unknown"): a replay on another GPU is a
// projection.
func TraceConfig(set *signatures.Set) replay.ConfigItem {
	g := set.Source.GPU()
	if g == "" {
		g = "unknown"
	}
	return replay.ConfigItem{Key: "trace-gpu", Value: g}
}

// replayer prepares and measures one signature; a replay.Device does it on
// a GPU, tests use a fake.
type replayer interface {
	Replay(sig *signatures.Signature, o Options) (*replay.Result, error)
}

type deviceReplayer struct{ d *replay.Device }

func (r deviceReplayer) Replay(sig *signatures.Signature, o Options) (*replay.Result, error) {
	r.d.Tier3 = o.Tier3
	p, err := r.d.PrepareFor(sig, o.Cache)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return r.d.Measure(p, o.Measure)
}

// benchTB is what Signature needs of a *testing.B.
type benchTB interface {
	testing.TB
	ReportMetric(n float64, unit string)
}

// Signature is the body of a signature's benchmark: it prepares the
// signature with the given ID on the test binary's shared GPU (replay.Open(0),
// opened on first use) and measures it once per call of the benchmark
// function, not b.N times: the measurement samples by itself until its
// confidence target (replay.Measure), with o and the environment's
// overrides (Options). It reports:
//
//   - ns/op: the replay's time per invocation, replacing the testing
//     package's own: the CUPTI kernel time (the measure a profiler
//     trace's durations are) when there is one, else the CUDA-event time;
//   - GB/s and TFLOP/s over that time, where the replay's work has bytes
//     or FLOPs;
//   - J/op and W, the energy per invocation and the average power, when
//     EnvEnergy asked for energy and NVML measured it (replay.Result.Energy).
//
// Run the benchmarks with -benchtime 1x: with a time-based -benchtime the
// testing package may call a benchmark again with a larger b.N when the
// first call took less than -benchtime; such a call reports the first
// call's measurement again instead of measuring twice.
//
// A signature that is part of another (replayed and timed with it), that is
// unreplayable, or that has no replay yet is skipped with the reason. With
// no usable GPU the benchmark is skipped, and fails instead when
// KREPLAY_REQUIRE_GPU=1; the same goes for an error preparing or measuring
// the signature (b.Error under KREPLAY_REQUIRE_GPU=1).
func Signature(b *testing.B, set *signatures.Set, id string, o Options) {
	b.Helper()
	runSignature(b, b.N, set, id, o, sharedReplayer)
}

// reported keeps each benchmark's last measurement by name, for the calls
// with b.N > 1 that follow the first (see Signature).
var reported sync.Map // string -> *replay.Result

func runSignature(tb benchTB, n int, set *signatures.Set, id string, o Options, open func() (replayer, error)) {
	tb.Helper()
	sig := set.ByID(id)
	if sig == nil {
		tb.Fatalf("signature %s is not in the set of %s", id, set.Source.File)
	}
	switch {
	case sig.PartOf != "":
		tb.Skipf("part of %s: replayed and timed with it", sig.PartOf)
	case sig.Unreplayable != "":
		tb.Skipf("%s", sig.Unreplayable)
	}
	if reportAgain(tb, n, reportResult) {
		return
	}
	r, o := openReplayer(tb, o, open)
	res, err := r.Replay(sig, o)
	if err != nil {
		if errors.Is(err, replay.ErrPartOf) || errors.Is(err, replay.ErrUnreplayable) || errors.Is(err, replay.ErrNotImplemented) {
			tb.Skipf("%v", err)
		}
		replayFailed(tb, err)
		return
	}
	reported.Store(tb.Name(), res)
	fmt.Println(FidelityLine(tb.Name(), FidelityOf(res)))
	tb.Logf("%s", res)
	if res.EnergyErr != "" {
		tb.Logf("energy not measured: %s", res.EnergyErr)
	}
	reportResult(tb, res)
}

// reportAgain reports, on a later run (n > 1) of a benchmark, the result
// its first run stored under its name, and returns whether it did.
func reportAgain[Res any](tb benchTB, n int, report func(benchTB, Res)) bool {
	tb.Helper()
	if n > 1 {
		if r, ok := reported.Load(tb.Name()); ok {
			report(tb, r.(Res))
			return true
		}
	}
	return false
}

// openReplayer opens a benchmark's replayer with open, which skips the
// benchmark without a GPU unless one is required (gputest.Require), and
// returns it with o's environment overrides resolved (withEnv).
func openReplayer[R any](tb benchTB, o Options, open func() (R, error)) (R, Options) {
	tb.Helper()
	var r R
	gputest.Require(tb, func() error {
		var err error
		r, err = open()
		return err
	})
	o, err := o.withEnv()
	if err != nil {
		tb.Fatal(err)
	}
	return r, o
}

// replayFailed fails the benchmark with its replay's error where a GPU
// is required (gputest.Required), else skips it.
func replayFailed(tb benchTB, err error) {
	tb.Helper()
	if gputest.Required() {
		tb.Error(err)
		return
	}
	tb.Skipf("%v (set %s=1 to fail instead)", err, gputest.Env)
}

// withEnv returns o with the environment's overrides and its cache mode
// resolved (replay.CacheMode.Resolve).
func (o Options) withEnv() (Options, error) {
	o.Cache = o.Cache.Resolve()
	if v, ok, err := envBool(EnvEnergy); err != nil {
		return o, err
	} else if ok {
		o.Measure.Energy = v
	}
	if v, ok, err := envBool(EnvCausalScores); err != nil {
		return o, err
	} else if ok {
		o.Tier3.UniformScores = !v
	}
	if v, ok, err := envBool(EnvEnergyDuty); err != nil {
		return o, err
	} else if ok {
		o.Measure.NoEnergyDuty = !v
	}
	if v := os.Getenv(EnvEnergyTicks); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			return o, fmt.Errorf("%s=%q: want a tick count of 2 or more", EnvEnergyTicks, v)
		}
		o.Measure.EnergyTicks = n
	}
	if v := os.Getenv(EnvCache); v != "" {
		c, err := replay.ParseCacheMode(v)
		if err != nil {
			return o, fmt.Errorf("%s: %w", EnvCache, err)
		}
		o.Cache = c.Resolve()
	}
	return o, nil
}

// envBool reads a boolean environment variable: 1/true/yes or 0/false/no,
// ok false when unset.
func envBool(name string) (v, ok bool, err error) {
	s := os.Getenv(name)
	switch strings.ToLower(s) {
	case "":
		return false, false, nil
	case "1", "true", "yes":
		return true, true, nil
	case "0", "false", "no":
		return false, true, nil
	}
	return false, false, fmt.Errorf("%s=%q: want 1 or 0", name, s)
}

// Metric units Signature reports besides ns/op.
const (
	UnitGBps   = "GB/s"
	UnitTFLOPs = "TFLOP/s"
	UnitJoules = "J/op"
	UnitWatts  = "W"
	// UnitIdleWatts is the idle power a model benchmark may report.
	UnitIdleWatts = "idle-W"
	// UnitTPOTNS and UnitTPOTP90NS are a generate's time per output token,
	// its median and 90th percentile in ns, and UnitTokens its tokens per
	// inference: measured by a model benchmark, predicted by the inference
	// benchmark (InferenceName).
	UnitTPOTNS    = "tpot-ns"
	UnitTPOTP90NS = "tpot-p90-ns"
	UnitTokens    = "tokens"
	// UnitSpanP10 and UnitSpanP90 are a model benchmark's spread: the
	// 10th and 90th percentiles of an inference's span on the GPU, in ns
	// (runner.Result.SpanMS), to hold ns/op against its noise.
	UnitSpanP10 = "p10-ns"
	UnitSpanP90 = "p90-ns"
	// UnitProcSpread is how far a measured run's processes' medians lie
	// apart (the largest over the smallest less 1), where the capture
	// measured several: whether the host repeats the wall time.
	UnitProcSpread = "proc-spread"
	// UnitMeanNS is a model benchmark's mean wall time per inference,
	// reported beside ns/op when ns/op is the median span (ModelMetrics):
	// the time the energy per inference and the idle gaps belong to.
	UnitMeanNS = "mean-ns"
	// UnitFirstsJoules is a model benchmark's energy per inference with
	// each measured block's first inference counted, where the runner
	// measured J/op over the inferences that follow another back to back
	// (runner.Result.EnergyJWithFirsts).
	UnitFirstsJoules = "firsts-J/op"
	// UnitSMMHz is the mean SM clock NVML sampled during a signature's
	// replay (replay.Result.GPU), at which kreplay report takes the
	// hardware roof's compute peak (package roofline).
	UnitSMMHz = "sm-MHz"
)

// ReplayNS is the time per invocation Signature reports as ns/op: the
// CUPTI kernel time when there is one, else the CUDA-event time
// (replay.Result.ReportedNS).
func ReplayNS(r *replay.Result) float64 { return r.ReportedNS() }

func reportResult(tb benchTB, r *replay.Result) { reportMetrics(tb, SignatureMetrics(r)) }

// loaded caches the sets Load has read, by the address of their data.
var loaded sync.Map // *byte -> *signatures.Set

// Load reads a generated package's embedded set once and returns it;
// name names it in errors. It fails tb if the set does not read back.
func Load(tb testing.TB, name string, data []byte) *signatures.Set {
	tb.Helper()
	if len(data) == 0 {
		tb.Fatalf("%s: empty signature set", name)
	}
	if s, ok := loaded.Load(&data[0]); ok {
		return s.(*signatures.Set)
	}
	s, err := signatures.ReadSet(bytes.NewReader(data), name)
	if err != nil {
		tb.Fatal(err)
	}
	s2, _ := loaded.LoadOrStore(&data[0], s)
	return s2.(*signatures.Set)
}

// Check is the test of a generated package: the set names the same
// signatures as ids, in order; its workload is workload; every benchmark
// name is unique; and benchproc, reading the names as go test prints
// them, gives back each workload and signature ID under the keys
// "workload" and "sig", and the timeline benchmark's workload.
func Check(t testing.TB, set *signatures.Set, workload string, ids []string) {
	t.Helper()
	if err := check(set, workload, ids); err != nil {
		t.Fatal(err)
	}
}

func check(set *signatures.Set, workload string, ids []string) error {
	if w := Workload(set.Source); w != workload {
		return fmt.Errorf("set's workload is %q, generated for %q: regenerate", w, workload)
	}
	if len(ids) != len(set.Signatures) {
		return fmt.Errorf("%d ids for %d signatures: regenerate", len(ids), len(set.Signatures))
	}
	var out bytes.Buffer
	names := map[string]bool{}
	for i, id := range ids {
		if set.Signatures[i].ID != id {
			return fmt.Errorf("ids[%d] is %s, the set's signature %d is %s: regenerate", i, id, i, set.Signatures[i].ID)
		}
		name := "Benchmark" + ReplayName + "/" + SignatureName(workload, id)
		if names[name] {
			return fmt.Errorf("benchmark name %s appears twice", name)
		}
		names[name] = true
		// As go test prints it, with a GOMAXPROCS suffix.
		fmt.Fprintf(&out, "%s-8\t1\t%d ns/op\n", name, i+1)
	}
	fmt.Fprintf(&out, "Benchmark%s/%s-8\t1\t%d ns/op\n", TimelineName, TimelineBenchName(workload), len(ids)+1)
	np, err := NewNameProjection()
	if err != nil {
		return err
	}
	br := benchfmt.NewReader(&out, "names")
	for i := 0; br.Scan(); i++ {
		r, ok := br.Result().(*benchfmt.Result)
		if !ok {
			return fmt.Errorf("benchfmt cannot read the generated names: %v", br.Result())
		}
		base, w, sig := np.Keys(r)
		want, wantSig := ReplayName, ""
		if i < len(ids) {
			wantSig = ids[i]
		} else {
			want = TimelineName
		}
		if base != want || w != workload || sig != wantSig {
			return fmt.Errorf("benchproc reads %s as %s workload=%q sig=%q, want %s workload=%q sig=%q",
				r.Name.Full(), base, w, sig, want, workload, wantSig)
		}
	}
	if err := br.Err(); err != nil {
		return err
	}
	return nil
}

// Replay runs a generated package's BenchmarkReplay: a sub-benchmark
// workload=W/sig=ID per signature of ids, in order (Signature), after the
// configuration line of the GPU the set was traced on.
func Replay(b *testing.B, set *signatures.Set, workload string, ids []string, o Options) {
	WriteConfig(os.Stdout, []replay.ConfigItem{TraceConfig(set)})
	for _, id := range ids {
		b.Run(SignatureName(workload, id), func(b *testing.B) { Signature(b, set, id, o) })
	}
}

// TimelineBench runs a generated package's BenchmarkTimeline: the
// sub-benchmark workload=W/timeline (Timeline).
func TimelineBench(b *testing.B, set *signatures.Set, workload string, o Options) {
	b.Run(TimelineBenchName(workload), func(b *testing.B) { Timeline(b, set, o) })
}

// ModelBench runs a generated package's BenchmarkModel: the sub-benchmark
// workload=W/model (Model).
func ModelBench(b *testing.B, set *signatures.Set, workload string, spec []byte) {
	b.Run(ModelBenchName(workload), func(b *testing.B) { Model(b, set, spec) })
}
