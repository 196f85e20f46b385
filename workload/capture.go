package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kreplay/kreplay/internal/buildinfo"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/signatures"
)

// Files Capture writes into a bundle.
const (
	SpecFile     = "spec.json"
	TraceFile    = "trace.json.gz"
	MeasuredFile = "measured.json"
	EnvFile      = "env.json"
	KernelsDir   = "kernels"
)

// CaptureOptions tune Capture.
type CaptureOptions struct {
	// Force replaces an existing bundle (only a bundle, or an empty
	// directory, is ever replaced).
	Force bool
	// Ticks is the NVML counter ticks of the measured run's energy window
	// (default DefaultTicks).
	Ticks int
	// Python runs kreplay's runner (default python3).
	Python string
	// Progress receives a line per step.
	Progress io.Writer
	// Processes is how many runners, each a process of its own, measure
	// the workload before the one that is traced (default
	// DefaultProcesses); the measured run is the median one's. One, with
	// no Kernels, measures in the traced runner.
	Processes int
	// Kernels, when set, records the binaries of the kernels the workload
	// runs. The measured runs are then always in runners of their own,
	// without the recorder, which slows launches in its process. The
	// traced runner starts with the recorder loaded, and after the warm-up one
	// inference runs with it armed, then it lets go of CUPTI, so that the
	// profiled inference that follows in the same process runs the very
	// kernels recorded (another process may autotune its Triton kernels
	// differently). An error fails the capture.
	Kernels KernelRecorder
	// ProfileWarmup is how many inferences are profiled and discarded
	// before the traced one: 0 means DefaultProfileWarmup, a
	// negative value none (the traced inference right after the
	// profiler's start).
	ProfileWarmup int
	// NoSchedule leaves the host's schedule out. Otherwise every runner
	// that measures the workload starts with the schedule recorder
	// loaded (package inject's, built with the system C compiler: without
	// one, a warning and no schedule), and after its measured run records
	// ScheduleInferences more inferences with it armed into the bundle
	// (ScheduleFile), with the recorder's overhead against the measured
	// run; a failure there is a warning, not a failed capture.
	NoSchedule bool
	// ScheduleInferences is how many inferences each schedule records
	// (default runner.DefaultScheduleInferences).
	ScheduleInferences int
}

// DefaultProfileWarmup is how many inferences a capture profiles and
// discards before the traced one (runner.DefaultProfileWarmup says why).
const DefaultProfileWarmup = runner.DefaultProfileWarmup

// profileWarmup is o's ProfileWarmup as the runner takes it.
func (o CaptureOptions) profileWarmup() int {
	switch {
	case o.ProfileWarmup == 0:
		return runner.DefaultProfileWarmup
	case o.ProfileWarmup < 0:
		return 0
	}
	return o.ProfileWarmup
}

// KernelRecorder records the binaries of the kernels a workload runs
// (RecordKernels is kreplay's, package inject's recorder).
type KernelRecorder interface {
	// Env returns the environment that loads the recorder into the
	// runner, writing what it records into the directory raw.
	Env(raw string) ([]string, error)
	// Pack packs what the recorder wrote into raw into dir, the bundle's
	// kernels directory, with progress lines to progress.
	Pack(raw, dir string, progress io.Writer) error
}

// Capture runs the workload s and writes its bundle into dir: it measures
// the workload unprofiled in o.Processes runners of their own (each
// loads it, warms it up, at least WarmupInferences and WarmupTime, when
// torch.compile compiles, and measures it as Measure does: wall time per
// inference, NVML energy over whole counter ticks, idle power after) and
// keeps the median one's run, with each process's host schedule recorded
// after its run (CaptureOptions.NoSchedule); then, in one more runner, it
// records the kernels when o.Kernels is set, profiles one inference
// (Kineto trace, record_shapes, gzip) and asks for the environment. It
// writes into a temporary directory beside dir and renames it to dir at
// the end: a failure leaves nothing, and an error says what failed and
// where.
func Capture(ctx context.Context, s *Spec, dir string, o CaptureOptions) (*Bundle, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if err := s.Runnable(); err != nil {
		return nil, err
	}
	if err := checkTarget(dir, o.Force); err != nil {
		return nil, err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".capture-")
	if err != nil {
		return nil, err
	}
	c := &capture{ctx: ctx, spec: s, dir: tmp, o: o}
	defer c.closeRunners()
	if err := c.run(); err != nil {
		c.closeRunners()
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("capture %s: %w", s.Name, err)
	}
	c.closeRunners()
	if err := replaceDir(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("capture %s: %w", s.Name, err)
	}
	fmt.Fprintf(o.Progress, "capture: bundle %s written\n", dir)
	return ReadBundle(dir)
}

// checkTarget refuses to overwrite dir unless force, and even then
// anything but a bundle or an empty directory.
func checkTarget(dir string, force bool) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !force {
		return fmt.Errorf("%s exists (-force replaces a bundle)", dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists and is not a directory: not replacing it", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 && !IsBundle(dir) {
		return fmt.Errorf("%s exists and is not a bundle (no %s): not replacing it", dir, BundleFile)
	}
	return nil
}

// replaceDir renames tmp to dir, replacing dir (checked by checkTarget).
func replaceDir(tmp, dir string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); err != nil {
		return os.Rename(tmp, dir)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}

// capture is one Capture under way.
type capture struct {
	ctx     context.Context
	spec    *Spec
	dir     string
	o       CaptureOptions
	runners []*runner.Runner
	stops   []func() bool
	// schedEnv loads the schedule recorder into the measured runners (nil:
	// no schedule); schedules are the bundle's schedule files written so
	// far, measuredProcess the index of the process whose run is kept.
	schedEnv        []string
	schedules       []string
	measuredProcess int
}

// start starts a runner for the workload and loads it; the context's end
// kills it.
func (c *capture) start(env []string, prefix string) (*runner.Runner, *runner.Info, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, nil, err
	}
	r, info, err := load(c.spec, c.o.Python, env, c.o.Progress, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("loading it (%s): %w", c.where(), err)
	}
	c.runners = append(c.runners, r)
	c.stops = append(c.stops, context.AfterFunc(c.ctx, r.Kill))
	return r, info, nil
}

// where says where the workload runs, for errors.
func (c *capture) where() string {
	prog := "kreplay's runner"
	if c.spec.Command != nil {
		prog = fmt.Sprintf("command %q in %s", strings.Join(c.spec.Command.Argv, " "), c.spec.Command.Dir)
	}
	return fmt.Sprintf("%s, device %d", prog, c.spec.Device())
}

func (c *capture) closeRunners() {
	for _, stop := range c.stops {
		stop()
	}
	for _, r := range c.runners {
		r.Close()
	}
	c.runners, c.stops = nil, nil
}

// run does the capture's steps into c.dir.
func (c *capture) run() error {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: %s: %s\n", c.spec.Name, c.spec.Summary())
	var env []string
	raw := filepath.Join(c.dir, ".kernels-raw")
	if c.o.Kernels != nil {
		if err := os.Mkdir(raw, 0o755); err != nil {
			return err
		}
		defer os.RemoveAll(raw)
		var err error
		if env, err = c.o.Kernels.Env(raw); err != nil {
			return fmt.Errorf("the kernel recorder: %w", err)
		}
	}
	c.schedEnv = c.scheduleRecorder()
	res, procs, err := c.measureApart()
	if err != nil {
		return err
	}
	fmt.Fprintf(p, "capture: loading (%s)\n", c.where())
	if res == nil { // measured in this runner
		env = append(env, c.schedEnv...)
	}
	r, info, err := c.start(env, "capture")
	if err != nil {
		return err
	}
	switch {
	case c.o.Kernels != nil:
		if err := c.record(r); err != nil {
			return err
		}
	case res == nil:
		if res, err = c.measure(r); err != nil {
			return err
		}
		if c.schedEnv != nil {
			c.schedule(r, 0)
		}
	default: // measured apart: warm up for the profiled inference
		fmt.Fprintf(p, "capture: warming up (at least %d inferences and %s), then profiling\n", WarmupInferences, warmupTime)
		if err := warmup(r, p, "capture"); err != nil {
			return fmt.Errorf("warming it up (%s): %w", c.where(), err)
		}
	}
	w := c.o.profileWarmup()
	fmt.Fprintf(p, "capture: profiling one inference, after %d profiled and discarded\n", w)
	trace := filepath.Join(c.dir, TraceFile)
	if err := r.Capture(trace, w); err != nil {
		return fmt.Errorf("profiling it (%s) into %s: %w", c.where(), trace, err)
	}
	env2, err := r.Env()
	if err != nil {
		fmt.Fprintf(p, "capture: the environment is incomplete: %v\n", err)
		env2 = map[string]any{"gpu": info.GPU, "driver": info.Driver, "cuda_runtime": info.CUDA, "torch": info.Torch, "error": err.Error()}
	}
	c.closeRunners()
	if c.o.Kernels != nil {
		if err := c.o.Kernels.Pack(raw, filepath.Join(c.dir, KernelsDir), p); err != nil {
			return fmt.Errorf("packing the recorded kernels: %w", err)
		}
	}
	if c.spec.Attention == "" && info.Attention != "" && c.spec.Model != nil {
		c.spec.Attention = info.Attention // what transformers chose
	}
	fmt.Fprintf(p, "capture: writing the bundle\n")
	return c.write(info, res, procs, env2)
}

// measure warms the workload up and measures it unprofiled.
func (c *capture) measure(r *runner.Runner) (*runner.Result, error) {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: warming up (at least %d inferences and %s), then measuring without the profiler\n", WarmupInferences, warmupTime)
	res, err := measure(r, c.o.Ticks, p, "capture")
	if err != nil {
		return nil, fmt.Errorf("measuring it (%s): %w", c.where(), err)
	}
	fmt.Fprintf(p, "capture: %.4g ms and %.4g J per inference, idle %.1f W\n", res.WallSPerInference*1e3, res.EnergyJPerInference, res.IdleW)
	if sp := res.Spread(); sp != "" {
		fmt.Fprintf(p, "capture: inferences' spans on the GPU: %s\n", sp)
	}
	if res.Clocks != nil {
		fmt.Fprintf(p, "capture: measured run at %s\n", res.Clocks)
	}
	return res, nil
}

// record warms the workload up and runs one inference with the kernel
// recorder armed, which then lets go of CUPTI for the profiler.
func (c *capture) record(r *runner.Runner) error {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: warming up, then recording the kernels of one inference\n")
	if err := warmup(r, p, "capture"); err != nil {
		return fmt.Errorf("warming it up (%s): %w", c.where(), err)
	}
	if err := r.Record(true); err != nil {
		return fmt.Errorf("recording its kernels (%s): %w", c.where(), err)
	}
	return nil
}

// write writes the spec, the measured run, the environment and the
// manifest, and checks that the bundle reads back.
func (c *capture) write(info *runner.Info, res *runner.Result, procs []float64, env map[string]any) error {
	specJSON, err := c.spec.JSON()
	if err != nil {
		return err
	}
	m := Manifest{Version: BundleVersion, Workload: c.spec.Name, Spec: SpecFile, Traces: []string{TraceFile},
		Measured: MeasuredFile, Env: EnvFile, Created: time.Now().UTC().Format(time.RFC3339), Kreplay: Version()}
	if st, err := os.Stat(filepath.Join(c.dir, KernelsDir)); err == nil && st.IsDir() {
		m.Kernels = KernelsDir
	}
	w := c.o.profileWarmup()
	m.ProfileWarmup = &w
	m.Schedules = c.schedules
	mp := c.measuredProcess
	m.MeasuredProcess = &mp
	files := []struct {
		name string
		v    any
	}{
		{MeasuredFile, measuredFile(c.spec.Name, info, res, procs)},
		{EnvFile, env},
		{BundleFile, m},
	}
	if err := os.WriteFile(filepath.Join(c.dir, SpecFile), specJSON, 0o644); err != nil {
		return err
	}
	for _, f := range files {
		b, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, f.name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return c.verify()
}

// verify reads the bundle back: the manifest, the spec, the measured run
// and the trace, which must import.
func (c *capture) verify() error {
	b, err := ReadBundle(c.dir)
	if err != nil {
		return err
	}
	if _, err := b.Spec(); err != nil {
		return err
	}
	set, err := b.ImportTrace(TraceFile)
	if err != nil {
		return fmt.Errorf("the captured trace does not import: %w", err)
	}
	if _, err := b.ModelRun(set); err != nil {
		return err
	}
	fmt.Fprintf(c.o.Progress, "capture: trace: %d GPU activities, %d signatures, %s GPU busy\n",
		set.Links.Activities, len(set.Signatures), busy(set))
	return nil
}

func busy(set *signatures.Set) time.Duration {
	var ns int64
	for _, d := range set.Summary {
		ns += d.BusyNS
	}
	return time.Duration(ns).Round(time.Microsecond)
}

// measuredRun is one run in measured.json (Measured's format).
type measuredRun struct {
	Iters   int     `json:"iters"`
	WallS   float64 `json:"wall_s_per_iter"`
	EventMS float64 `json:"event_ms_per_iter"`
	EnergyJ float64 `json:"energy_j_per_iter,omitempty"`
	WindowS float64 `json:"window_s"`
	IdleW   float64 `json:"idle_w,omitempty"`
	Ticks   int     `json:"ticks"`
	Inside  float64 `json:"inside"`
	// SpanMS: the 10th, 50th and 90th percentiles of an inference's span
	// on the GPU (runner.Result.SpanMS).
	SpanMS []float64 `json:"span_ms_per_iter,omitempty"`
	// Clocks: the SM clock and throttling inside the energy window.
	Clocks *runner.Clocks `json:"clocks,omitempty"`
	// TPOTMS and Tokens: a generate's time per output token (10th, 50th,
	// 90th percentiles, ms) and tokens per inference (runner.Result).
	TPOTMS []float64 `json:"tpot_ms,omitempty"`
	Tokens float64   `json:"tokens_per_iter,omitempty"`
	// Processes: each measured process's median inference (ms, or its
	// mean where the runner gave no spread), in run order; the run above
	// is the median process's.
	Processes []float64 `json:"median_ms_per_process,omitempty"`
}

type measuredMachine struct {
	GPU    string                 `json:"gpu"`
	Torch  string                 `json:"torch"`
	CUDA   string                 `json:"cuda"`
	Driver string                 `json:"driver"`
	Runs   map[string]measuredRun `json:"runs"`
}

// measuredFile is measured.json: the run, under the machine's key.
func measuredFile(workload string, info *runner.Info, res *runner.Result, procs []float64) map[string]measuredMachine {
	run := measuredRun{Iters: res.Inferences, WallS: res.WallSPerInference, EventMS: res.EventMSPerInference, TPOTMS: res.TPOTMS, Tokens: res.Tokens,
		EnergyJ: res.EnergyJPerInference, WindowS: res.WindowS, IdleW: res.IdleW, Ticks: res.Ticks, Inside: res.Inside,
		SpanMS: res.SpanMS, Clocks: res.Clocks, Processes: procs}
	return map[string]measuredMachine{MachineKey(info.GPU): {GPU: info.GPU, Torch: info.Torch, CUDA: info.CUDA,
		Driver: info.Driver, Runs: map[string]measuredRun{workload: run}}}
}

// MachineKey is the key of a GPU's runs in measured.json: its name in
// lower case without "NVIDIA", other characters than letters and digits
// as '-' ("NVIDIA H100 80GB HBM3" is "h100-80gb-hbm3").
func MachineKey(gpu string) string {
	s := strings.ToLower(strings.TrimSpace(gpu))
	s = strings.TrimPrefix(s, "nvidia ")
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s)
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	if s = strings.Trim(s, "-"); s == "" {
		s = "gpu"
	}
	return s
}

// Version is kreplay's version as the binary knows it (buildinfo.Version).
func Version() string { return buildinfo.Version() }
