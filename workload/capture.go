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
	// one, a warning and no schedule), and its measured run records
	// ScheduleInferences more inferences with it armed, between its
	// measured blocks (runner.Runner.RunRecorded), into the bundle
	// (ScheduleFile), with the recorder's overhead against the measured
	// run; a failure there is a warning, and a run without it, not a
	// failed capture.
	NoSchedule bool
	// ScheduleInferences is how many inferences each schedule records
	// (default runner.DefaultScheduleInferences).
	ScheduleInferences int
	// WarmupTime is the least time of each warm-up (default WarmupTime;
	// WarmupInferences is the least count either way).
	WarmupTime time.Duration
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

// warmupTime is o's WarmupTime, or the default.
func (o CaptureOptions) warmupTime() time.Duration {
	if o.WarmupTime > 0 {
		return o.WarmupTime
	}
	return warmupTime
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
//
// A tensor-parallel spec (Spec.World > 1) runs every runner as a group of
// processes, one per rank on its device (runner.Group), driven in lock
// step: the bundle then holds each rank's trace, kernels and schedules
// (Manifest.Ranks) and its measured run with its GPU's energy
// (measured.json's per-rank form); the measured process kept is the one
// whose rank 0 ran the median inference. A rank that fails fails the
// capture, named.
func Capture(ctx context.Context, s *Spec, dir string, o CaptureOptions) (*Bundle, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if err := s.Capturable(); err != nil {
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
	ctx    context.Context
	spec   *Spec
	dir    string
	o      CaptureOptions
	groups []*runner.Group
	stops  []func() bool
	// rankEnv is added to each rank's environment (the kernel recorder of
	// a multi-rank capture: a directory per rank).
	rankEnv func(rank int) []string
	// schedEnv loads the schedule recorder into the measured runners (nil:
	// no schedule); schedules are the bundle's schedule files written so
	// far, measuredProcess the index of the process whose run is kept.
	schedEnv        []string
	schedules       []string
	measuredProcess int
}

// start starts the runners of the workload, one per rank, with env added
// to every rank's environment and rankEnv(r) (where not nil) to rank r's,
// and loads it (each rank's Info, in rank order); the context's end kills
// them.
func (c *capture) start(env []string, rankEnv func(int) []string, prefix string) (*runner.Group, []*runner.Info, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, nil, err
	}
	g, infos, err := loadGroup(c.spec, c.o.Python, c.devices(), env, rankEnv, c.o.Progress, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("loading it (%s): %w", c.where(), err)
	}
	c.groups = append(c.groups, g)
	c.stops = append(c.stops, context.AfterFunc(c.ctx, g.Kill))
	return g, infos, nil
}

// where says where the workload runs, for errors.
func (c *capture) where() string {
	prog := "kreplay's runner"
	if c.spec.Command != nil {
		prog = fmt.Sprintf("command %q in %s", strings.Join(c.spec.Command.Argv, " "), c.spec.Command.Dir)
	}
	if c.spec.World() > 1 {
		return fmt.Sprintf("%s, %d ranks on devices %v", prog, c.spec.World(), c.spec.Devices)
	}
	return fmt.Sprintf("%s, device %d", prog, c.spec.Device())
}

func (c *capture) closeRunners() {
	for _, stop := range c.stops {
		stop()
	}
	for _, g := range c.groups {
		g.Close()
	}
	c.groups, c.stops = nil, nil
}

// run does the capture's steps into c.dir.
func (c *capture) run() error {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: %s: %s\n", c.spec.Name, c.spec.Summary())
	raw := filepath.Join(c.dir, ".kernels-raw")
	env, err := c.kernelRecorder(raw)
	if err != nil {
		return err
	}
	if c.o.Kernels != nil {
		defer os.RemoveAll(raw)
	}
	c.schedEnv = c.scheduleRecorder()
	res, procs, err := c.measureApart()
	if err != nil {
		return err
	}
	fmt.Fprintf(p, "capture: loading (%s)\n", c.where())
	if res == nil && c.o.Kernels == nil { // measured in this runner, which the kernel recorder does not record
		env = append(env, c.schedEnv...)
	}
	g, infos, err := c.start(env, c.rankEnv, "capture")
	if err != nil {
		return err
	}
	switch {
	case c.o.Kernels != nil:
		if err := c.record(g); err != nil {
			return err
		}
	case res == nil:
		if res, err = c.measure(g, 0); err != nil {
			return err
		}
	default: // measured apart: warm up for the profiled inference
		fmt.Fprintf(p, "capture: warming up (at least %d inferences and %s), then profiling\n", WarmupInferences, c.o.warmupTime())
		if err := warmupGroup(g, c.o.warmupTime(), p, "capture"); err != nil {
			return fmt.Errorf("warming it up (%s): %w", c.where(), err)
		}
	}
	w := c.o.profileWarmup()
	fmt.Fprintf(p, "capture: profiling one inference, after %d profiled and discarded\n", w)
	traces := c.traceFiles()
	paths := make([]string, len(traces))
	for i, t := range traces {
		paths[i] = filepath.Join(c.dir, t)
	}
	if err := g.Capture(paths, w); err != nil {
		return fmt.Errorf("profiling it (%s) into %s: %w", c.where(), strings.Join(paths, ", "), err)
	}
	envs, err := g.Env()
	if err != nil {
		fmt.Fprintf(p, "capture: the environment is incomplete: %v\n", err)
		for i, info := range infos {
			envs[i] = map[string]any{"gpu": info.GPU, "driver": info.Driver, "cuda_runtime": info.CUDA, "torch": info.Torch, "error": err.Error()}
		}
	}
	c.closeRunners()
	if err := c.packKernels(raw); err != nil {
		return err
	}
	if c.spec.Attention == "" && infos[0].Attention != "" && c.spec.Model != nil {
		c.spec.Attention = infos[0].Attention // what transformers chose
	}
	fmt.Fprintf(p, "capture: writing the bundle\n")
	return c.write(infos, res, procs, envFile(envs))
}

// kernelRecorder makes the directory the kernel recorder writes into
// (raw, or a directory per rank under it) and returns the environment
// that loads it into a one-rank runner; a multi-rank capture's ranks get
// theirs through c.rankEnv. Nil without a recorder.
func (c *capture) kernelRecorder(raw string) ([]string, error) {
	if c.o.Kernels == nil {
		return nil, nil
	}
	if err := os.Mkdir(raw, 0o755); err != nil {
		return nil, err
	}
	n := c.spec.World()
	envs := make([][]string, n)
	for r := range n {
		dir := rawKernelDir(raw, r, n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var err error
		if envs[r], err = c.o.Kernels.Env(dir); err != nil {
			return nil, fmt.Errorf("the kernel recorder: %w", err)
		}
	}
	if n == 1 {
		return envs[0], nil
	}
	c.rankEnv = func(r int) []string { return envs[r] }
	return nil, nil
}

// packKernels packs what each rank's kernel recorder wrote into the
// bundle (KernelsDir, or RankKernelsDir per rank).
func (c *capture) packKernels(raw string) error {
	if c.o.Kernels == nil {
		return nil
	}
	n := c.spec.World()
	for r, dir := range c.kernelDirs() {
		dst := filepath.Join(c.dir, filepath.FromSlash(dir))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := c.o.Kernels.Pack(rawKernelDir(raw, r, n), dst, c.o.Progress); err != nil {
			if n > 1 {
				return fmt.Errorf("packing rank %d's recorded kernels: %w", r, err)
			}
			return fmt.Errorf("packing the recorded kernels: %w", err)
		}
	}
	return nil
}

// measure warms the workload up and measures it unprofiled, with the
// host's schedule of process recorded in the same run where the runners
// have the recorder (c.schedEnv): each rank's run, in rank order.
func (c *capture) measure(g *runner.Group, process int) ([]*runner.Result, error) {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: warming up (at least %d inferences and %s), then measuring without the profiler\n", WarmupInferences, c.o.warmupTime())
	var reqs []runner.ScheduleRequest
	if c.schedEnv != nil {
		reqs = c.scheduleRequests(process)
		defer c.removeRaw(reqs)
	}
	res, err := measureGroup(g, c.o.Ticks, c.o.warmupTime(), p, "capture", reqs)
	if errors.Is(err, runner.ErrSchedule) {
		fmt.Fprintf(p, "capture: warning: no host schedule from process %d: %v; measuring without it\n", process+1, err)
		reqs = nil
		res, err = measureGroup(g, c.o.Ticks, c.o.warmupTime(), p, "capture", nil)
	}
	if err != nil {
		return nil, fmt.Errorf("measuring it (%s): %w", c.where(), err)
	}
	if reqs != nil {
		c.keepSchedules(process, reqs, res)
	}
	for i, r := range res {
		who := "capture:"
		if len(res) > 1 {
			who = fmt.Sprintf("capture: rank %d (device %d):", i, g.Devices()[i])
		}
		fmt.Fprintf(p, "%s %.4g ms and %.4g J per inference%s, idle %.1f W\n", who, r.WallSPerInference*1e3, r.EnergyJPerInference, withFirsts(r), r.IdleW)
		if sp := r.Spread(); sp != "" {
			fmt.Fprintf(p, "%s inferences' spans on the GPU: %s\n", who, sp)
		}
		if r.Clocks != nil {
			fmt.Fprintf(p, "%s measured run at %s\n", who, r.Clocks)
		}
	}
	return res, nil
}

// warmupGroup warms every rank up: at least WarmupInferences inferences
// and minTime (warmup's, in lock step).
func warmupGroup(g *runner.Group, minTime time.Duration, log io.Writer, prefix string) error {
	ns, err := g.Warmup(WarmupInferences, minTime)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: %d warm-up inferences\n", prefix, ns[0])
	return nil
}

// measureGroup is measure's, every rank in lock step: a warm-up, then
// inferences back to back until every rank's energy window of ticks
// closed and MinInferences ran, then each GPU's idle power. With reqs
// (one per rank) the run records the host's schedule between its
// measured blocks (runner.Group.RunRecorded); a recorder that cannot
// record fails it with runner.ErrSchedule.
func measureGroup(g *runner.Group, ticks int, warm time.Duration, log io.Writer, prefix string, reqs []runner.ScheduleRequest) ([]*runner.Result, error) {
	if ticks == 0 {
		ticks = DefaultTicks
	}
	if err := warmupGroup(g, warm, log, prefix); err != nil {
		return nil, err
	}
	var res []*runner.Result
	var err error
	if reqs != nil {
		res, err = g.RunRecorded(ticks, MinInferences, maxRunTime, reqs)
	} else {
		res, err = g.Run(ticks, MinInferences, maxRunTime)
	}
	if err != nil {
		return nil, err
	}
	r := res[0]
	fmt.Fprintf(log, "%s: %d inferences back to back, %.2f of them in an energy window of %d ticks (%.2f s)\n",
		prefix, r.Inferences, r.Inside, r.Ticks, r.WindowS)
	return res, nil
}

// record warms the workload up and runs one inference with the kernel
// recorder armed, which then lets go of CUPTI for the profiler.
func (c *capture) record(g *runner.Group) error {
	p := c.o.Progress
	fmt.Fprintf(p, "capture: warming up, then recording the kernels of one inference\n")
	if err := warmupGroup(g, c.o.warmupTime(), p, "capture"); err != nil {
		return fmt.Errorf("warming it up (%s): %w", c.where(), err)
	}
	if err := g.Record(true); err != nil {
		return fmt.Errorf("recording its kernels (%s): %w", c.where(), err)
	}
	return nil
}

// write writes the spec, the measured run, the environment and the
// manifest, and checks that the bundle reads back.
func (c *capture) write(infos []*runner.Info, res []*runner.Result, procs [][]float64, env map[string]any) error {
	specJSON, err := c.spec.JSON()
	if err != nil {
		return err
	}
	m := Manifest{Version: BundleVersion, Workload: c.spec.Name, Spec: SpecFile, Traces: c.traceFiles(),
		Measured: MeasuredFile, Env: EnvFile, Created: time.Now().UTC().Format(time.RFC3339), Kreplay: Version()}
	w := c.o.profileWarmup()
	m.ProfileWarmup = &w
	m.Schedules = c.schedules
	mp := c.measuredProcess
	m.MeasuredProcess = &mp
	var measured any
	if c.spec.World() == 1 {
		if st, err := os.Stat(filepath.Join(c.dir, KernelsDir)); err == nil && st.IsDir() {
			m.Kernels = KernelsDir
		}
		var p []float64
		if len(procs) > 0 {
			p = procs[0]
		}
		measured = measuredFile(c.spec.Name, infos[0], res[0], p)
	} else {
		m.Ranks = c.rankFiles()
		measured = measuredFileRanks(c.spec.Name, c.devices(), infos, res, procs)
	}
	files := []struct {
		name string
		v    any
	}{
		{MeasuredFile, measured},
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
// of every rank and every trace, which must import.
func (c *capture) verify() error {
	b, err := ReadBundle(c.dir)
	if err != nil {
		return err
	}
	if _, err := b.Spec(); err != nil {
		return err
	}
	if c.spec.World() > 1 {
		return c.verifyRanks(b)
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
	// EnergyJWithFirsts: the energy per inference with each measured
	// block's first inference counted (runner.Result.EnergyJWithFirsts);
	// EnergyJ and the window leave them out.
	EnergyJWithFirsts float64 `json:"energy_j_per_iter_with_firsts,omitempty"`
	WindowS           float64 `json:"window_s"`
	IdleW             float64 `json:"idle_w,omitempty"`
	Ticks             int     `json:"ticks"`
	Inside            float64 `json:"inside"`
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
		EnergyJ: res.EnergyJPerInference, EnergyJWithFirsts: res.EnergyJWithFirsts, WindowS: res.WindowS, IdleW: res.IdleW, Ticks: res.Ticks, Inside: res.Inside,
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
