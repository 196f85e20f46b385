package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/runner"
	"github.com/kreplay/kreplay/internal/traces"
)

// The capture tests run the user's-command path on a stand-in GPU: the
// runner's fake_command.py under stand-in torch and pynvml
// (internal/runner/testdata), whose profiler exports the embedded
// BLOOM-560M prefill trace.
var runnerTestdata = filepath.Join("..", "internal", "runner", "testdata")

func fakeGPU(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	mods, err := filepath.Abs(filepath.Join(runnerTestdata, "fakemods"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", mods)
	t.Setenv("FAKE_TRACE", plainTrace(t))
	old := warmupTime
	warmupTime = 50 * time.Millisecond
	t.Cleanup(func() { warmupTime = old })
	fakeScheduler(t)
}

// fakeScheduler gives the runners the stand-in schedule recorder
// (internal/runner/testdata/fake_sched.c, built with gcc), which logs its
// calls to $FAKE_SCHED_LOG; without gcc, the recorder cannot be built.
func fakeScheduler(t *testing.T) {
	t.Helper()
	old := scheduleEnv
	t.Cleanup(func() { scheduleEnv = old })
	if _, err := exec.LookPath("gcc"); err != nil {
		scheduleEnv = func() ([]string, error) { return nil, inject.ErrNoCompiler }
		return
	}
	tmp := t.TempDir()
	lib := filepath.Join(tmp, "libfake_sched.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", lib, filepath.Join(runnerTestdata, "fake_sched.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	t.Setenv("FAKE_SCHED_LOG", filepath.Join(tmp, "sched.log"))
	// Preloaded, as inject.ScheduleEnv does: the stand-in is in hook mode.
	scheduleEnv = func() ([]string, error) {
		return []string{"LD_PRELOAD=" + inject.Preload(lib, os.Getenv("LD_PRELOAD")), "KREPLAY_SCHED_LIB=" + lib}, nil
	}
}

// haveScheduler skips a test of the schedules where the stand-in
// recorder could not be built.
func haveScheduler(t *testing.T) {
	t.Helper()
	if os.Getenv("FAKE_SCHED_LOG") == "" {
		t.Skip("no gcc to build the stand-in schedule recorder")
	}
}

// readSchedule returns the bundle's i-th schedule, gunzipped.
func readSchedule(t *testing.T, b *Bundle, i int) string {
	t.Helper()
	r, err := b.OpenSchedule(i)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// plainTrace writes the embedded prefill trace, gunzipped.
func plainTrace(t *testing.T) string {
	t.Helper()
	path, err := traces.WriteGunzipped(traces.Default, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func commandSpec(t *testing.T, argv, mode string) *Spec {
	t.Helper()
	dir, err := filepath.Abs(runnerTestdata)
	if err != nil {
		t.Fatal(err)
	}
	js := fmt.Sprintf(`{"version": 1, "command": {"argv": %s, "dir": %q, "args": {"mode": %q}},
		"workload": {"kind": "prefill", "batch": 4, "seq": 512}}`, argv, dir, mode)
	s, err := ParseSpec([]byte(js), "spec.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// leftovers lists what a capture left beside its bundle other than it.
func leftovers(t *testing.T, parent, bundle string) []string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != bundle {
			out = append(out, e.Name())
		}
	}
	return out
}

// A capture writes a bundle that reads back, recording the kernels in
// the same runner with the stand-in recorder.
func TestCapture(t *testing.T) {
	fakeGPU(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	spec := commandSpec(t, `["python3", "fake_command.py"]`, "ok")
	var progress strings.Builder
	rec := newFakeRecorder(t)
	opt := CaptureOptions{Ticks: 5, Progress: &progress, Kernels: rec}
	b, err := Capture(context.Background(), spec, dir, opt)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	t.Logf("progress:\n%s", progress.String())
	if b.Manifest.Workload != "fake_command_prefill" || b.Manifest.Kernels != KernelsDir || b.Manifest.Measured != MeasuredFile || b.Manifest.Env != EnvFile ||
		!reflect.DeepEqual(b.Manifest.Traces, []string{TraceFile}) || b.Manifest.ProfileWarmup == nil || *b.Manifest.ProfileWarmup != DefaultProfileWarmup {
		t.Errorf("manifest %+v", b.Manifest)
	}
	if b, _ := os.ReadFile(rec.log); string(b) != "arm 1\narm 0\nflush\ndetach\n" {
		t.Errorf("recorder log %q", b)
	}
	if !rec.packed {
		t.Error("the recorder's output was not packed")
	}
	back, err := b.Spec()
	if err != nil || !reflect.DeepEqual(back, spec) {
		t.Errorf("spec.json %+v, %v; want %+v", back, err, spec)
	}
	m, err := b.Measured()
	if err != nil {
		t.Fatal(err)
	}
	r := m.Runs[0]
	if r.Machine != "fake-gpu" || r.Workload != b.Manifest.Workload || r.WallS < 0.002 || r.EnergyJ <= 0 || r.IdleW < 90 || r.IdleW > 110 || r.Iters < 10 {
		t.Errorf("measured %+v", r)
	}
	// The measured run's clocks, as the runner sampled them.
	var raw map[string]struct {
		Runs map[string]struct {
			Clocks    *runner.Clocks
			SpanMS    []float64 `json:"span_ms_per_iter"`
			WallS     float64   `json:"wall_s_per_iter"`
			Processes []float64 `json:"median_ms_per_process"`
		} `json:"runs"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, MeasuredFile)); err != nil || json.Unmarshal(data, &raw) != nil {
		t.Fatalf("measured.json: %v", err)
	}
	kept := raw["fake-gpu"].Runs[b.Manifest.Workload]
	keptMS, _ := (&runner.Result{SpanMS: kept.SpanMS, WallSPerInference: kept.WallS}).MedianMS()
	if ps := kept.Processes; len(ps) != 3 || !slices.Contains(ps, keptMS) {
		t.Errorf("measured per process %v, the run kept %v", ps, kept.SpanMS)
	}
	// Each measured process's host schedule, and which process's run is
	// kept.
	if mp := b.Manifest.MeasuredProcess; mp == nil || *mp < 0 || *mp >= len(kept.Processes) || kept.Processes[*mp] != keptMS {
		t.Errorf("measured process %v of %v; the run kept %v", mp, kept.Processes, keptMS)
	}
	if os.Getenv("FAKE_SCHED_LOG") != "" {
		checkSchedules(t, b, 3, progress.String())
		if b.MeasuredSchedule() != *b.Manifest.MeasuredProcess {
			t.Errorf("MeasuredSchedule %d, measured process %d", b.MeasuredSchedule(), *b.Manifest.MeasuredProcess)
		}
	}
	if c := kept.Clocks; c == nil || c.MeanMHz != 1980 || c.Samples == 0 || c.PowerCapped < 0 || c.PowerCapped > 1 {
		t.Errorf("measured run's clocks %+v", c)
	}
	env, err := b.Env()
	if err != nil || env.GPU != "Fake GPU" || env.SMCount != 7 || env.CUDNN != "9.10.2" {
		t.Errorf("env %+v, %v", env, err)
	}
	sets, err := b.Sets()
	if err != nil || len(sets[0].Signatures) != 47 || sets[0].Source.Workload != b.Manifest.Workload {
		t.Errorf("trace: %v", err)
	}
	for _, want := range []string{"capture: fake_command_prefill: command", "capture: loading (command", "warm-up inferences",
		"energy window of", "capture: profiling one inference", "recording the kernels of one inference", "capture: writing the bundle",
		"capture: trace: 703 GPU activities, 47 signatures", "capture: bundle " + dir + " written"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q", want)
		}
	}
	// With a recorder, the measured run has a runner of its own, before
	// the one that records and profiles.
	pr := progress.String()
	if m, r := strings.LastIndex(pr, "energy window of"), strings.Index(pr, "recording the kernels"); !strings.Contains(pr, "process 3 of 3, without the profiler or the kernel recorder") ||
		!strings.Contains(pr, "median inference per process") || m < 0 || r < m {
		t.Errorf("the measured runs are not in three runners of their own, before the recording one:\n%s", pr)
	}

	if l := leftovers(t, parent, "out"); len(l) > 0 {
		t.Errorf("left beside the bundle: %v", l)
	}

	// An existing bundle is kept unless forced; forced, it is replaced.
	if _, err := Capture(context.Background(), spec, dir, CaptureOptions{Ticks: 5, Processes: 1}); err == nil || !strings.Contains(err.Error(), dir+" exists (-force replaces a bundle)") {
		t.Errorf("second capture: %v", err)
	}
	if _, err := Capture(context.Background(), spec, dir, CaptureOptions{Ticks: 5, Force: true, Processes: 1}); err != nil {
		t.Fatal(err)
	}
	b, err = ReadBundle(dir)
	if err != nil || b.Manifest.Kernels != "" {
		t.Fatalf("replaced bundle %+v, %v", b, err)
	}
	// Measured in the traced runner, its schedule too.
	if os.Getenv("FAKE_SCHED_LOG") != "" && (!slices.Equal(b.Schedules(), []string{ScheduleFile(0)}) || b.MeasuredSchedule() != 0) {
		t.Errorf("one process: schedules %v, measured %d", b.Schedules(), b.MeasuredSchedule())
	}
	// Measured apart without a recorder, the traced runner still warms up
	// before it profiles: a warm-up in each of the three runners.
	progress.Reset()
	if _, err := Capture(context.Background(), spec, dir, CaptureOptions{Ticks: 5, Force: true, Processes: 2, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(progress.String(), "warm-up inferences"); n != 3 || !strings.Contains(progress.String(), "then profiling") {
		t.Errorf("%d warm-ups in three runners, two measuring and one profiling:\n%s", n, progress.String())
	}
	if b, err := ReadBundle(dir); err != nil || os.Getenv("FAKE_SCHED_LOG") != "" && len(b.Schedules()) != 2 {
		t.Errorf("two processes: %v, %v", b, err)
	}
	if l := leftovers(t, parent, "out"); len(l) > 0 {
		t.Errorf("left beside the bundle: %v", l)
	}
}

// checkSchedules checks a captured bundle's schedules, one for each of n
// processes: each the stand-in recorder's file of the process, recorded
// in hook mode, of every measured inference (at least
// runner.DefaultScheduleInferences), its recorder and cost said in the
// progress lines.
func checkSchedules(t *testing.T, b *Bundle, n int, progress string) {
	t.Helper()
	if len(b.Schedules()) != n {
		t.Fatalf("schedules %v, want %d", b.Schedules(), n)
	}
	for i, name := range b.Schedules() {
		if name != ScheduleFile(i) {
			t.Errorf("schedule %d is %s", i, name)
		}
		s := readSchedule(t, b, i)
		if !strings.HasPrefix(s, "kreplay-schedule 1\ncpu ") || !strings.Contains(s, fmt.Sprintf("\nprocess %d overhead_ns_per_inference ", i)) ||
			strings.Count(s, "\ninference ") < runner.DefaultScheduleInferences {
			t.Errorf("schedule %d:\n%s", i, s)
		}
		want := regexp.MustCompile(fmt.Sprintf(`capture: process %d: host schedule of %d inferences \(%s\), recorded by the hook recorder: every measured inference, in %d blocks; `+
			`its cost [-+][0-9.e+]+ µs per inference \([-+][0-9.]+%% of the measured [0-9.]+ ms\), [0-9.]+ ms armed against [0-9.]+ ms disarmed, the medians of %d pairs of single inferences; the probe: [0-9.e+]+ µs per recorded call\n`,
			i+1, strings.Count(s, "\ninference "), regexp.QuoteMeta(name), runner.DefaultScheduleBlocks, runner.DefaultCostPairs))
		if !want.MatchString(progress) {
			t.Errorf("progress lacks %s:\n%s", want, progress)
		}
		if want := fmt.Sprintf("capture: process %d: 5 calls of threads other than the inference's", i+1); !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q (the stand-in recorder's count):\n%s", want, progress)
		}
	}
	entries, _ := os.ReadDir(b.Name)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("the bundle keeps %s", e.Name())
		}
	}
}

// With NoSchedule, without a C compiler for the recorder, or where the
// recorder fails, the capture goes on without schedules, with a warning
// for the last two.
func TestCaptureWithoutSchedules(t *testing.T) {
	fakeGPU(t)
	haveScheduler(t)
	spec := commandSpec(t, `["python3", "fake_command.py"]`, "ok")
	for _, tc := range []struct {
		name  string
		opt   CaptureOptions
		setup func(t *testing.T)
		want  string
	}{
		{"no schedule", CaptureOptions{NoSchedule: true}, nil, ""},
		{"no compiler", CaptureOptions{}, func(t *testing.T) {
			scheduleEnv = func() ([]string, error) { return nil, inject.ErrNoCompiler }
		}, "capture: warning: no host schedule: the schedule recorder: no C compiler"},
		{"recorder fails", CaptureOptions{}, func(t *testing.T) { t.Setenv("FAKE_SCHED_ARM", "-3") },
			"capture: warning: no host schedule from process 1: runner run: host schedule: schedule: the schedule recorder could not arm: CUPTI refused it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				old := scheduleEnv
				t.Cleanup(func() { scheduleEnv = old })
				tc.setup(t)
			}
			var progress strings.Builder
			tc.opt.Ticks, tc.opt.Processes, tc.opt.Progress = 5, 2, &progress
			b, err := Capture(context.Background(), spec, filepath.Join(t.TempDir(), "b"), tc.opt)
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			if len(b.Schedules()) != 0 || b.MeasuredSchedule() != -1 || b.Manifest.MeasuredProcess == nil {
				t.Errorf("schedules %v, measured schedule %d, process %v", b.Schedules(), b.MeasuredSchedule(), b.Manifest.MeasuredProcess)
			}
			if tc.want == "" && strings.Contains(progress.String(), "host schedule") || tc.want != "" && !strings.Contains(progress.String(), tc.want) {
				t.Errorf("progress, want %q:\n%s", tc.want, progress.String())
			}
		})
	}
}

// fakeRecorder is a KernelRecorder with the stand-in recorder library
// (internal/runner/testdata/fake_inject.c, built with gcc), which logs its
// calls; its Pack writes an index of no launches (the stand-in GPU runs no
// kernel).
type fakeRecorder struct {
	lib, log string
	packed   bool
}

func newFakeRecorder(t *testing.T) *fakeRecorder {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build the stand-in recorder")
	}
	tmp := t.TempDir()
	r := &fakeRecorder{lib: filepath.Join(tmp, "libfake_inject.so"), log: filepath.Join(tmp, "inject.log")}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", r.lib, filepath.Join(runnerTestdata, "fake_inject.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return r
}

func (r *fakeRecorder) Env(raw string) ([]string, error) {
	// As the real one's, CUDA loads it: a runner with it loads no other
	// injection library (the schedule recorder).
	return []string{"CUDA_INJECTION64_PATH=" + r.lib, "KREPLAY_INJECT_LIB=" + r.lib, "FAKE_INJECT_LOG=" + r.log}, nil
}

func (r *fakeRecorder) Pack(raw, dir string, progress io.Writer) error {
	if st, err := os.Stat(raw); err != nil || !st.IsDir() {
		return fmt.Errorf("no raw directory %s: %v", raw, err)
	}
	r.packed = true
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"version": 1, "launches": [], "calls": []}`), 0o644)
}

// A capture that fails says what and where, and leaves nothing behind.
func TestCaptureFailures(t *testing.T) {
	fakeGPU(t)
	for _, tc := range []struct {
		name, argv, mode, env string
		want                  []string
	}{
		{"out of memory", `["python3", "fake_command.py"]`, "oom", "",
			[]string{"capture fake_command_prefill: loading it (command \"python3 fake_command.py\" in ", ", device 0)", "out of GPU memory", "Tried to allocate 20.00 GiB"}},
		{"no GPU", `["python3", "fake_command.py"]`, "ok", "FAKE_NO_GPU=1", []string{"full-model runner unavailable", "sees no CUDA device"}},
		{"not JSON", `["python3", "bad_command.py", "junk"]`, "ok", "", []string{"reply to load is not a JSON object", `"Loading checkpoint shards: 100%"`}},
		{"exits early", `["python3", "bad_command.py", "exit"]`, "ok", "", []string{"exited (exit status 3) before replying to load", "giving up"}},
		{"no such program", `["no-such-program-kreplay"]`, "ok", "", []string{`command "no-such-program-kreplay"`, "executable file not found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				k, v, _ := strings.Cut(tc.env, "=")
				t.Setenv(k, v)
			}
			captureFails(t, commandSpec(t, tc.argv, tc.mode), CaptureOptions{Ticks: 5, Processes: 1}, tc.want)
		})
	}
}

// A forced capture replaces only a bundle or an empty directory, and a
// spec the runner does not run stops before anything starts.
func TestCaptureRefuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("x"), 0o644)
	spec, err := FromName("llama-7b_prefill")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Capture(context.Background(), spec, dir, CaptureOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "is not a bundle (no bundle.json): not replacing it") {
		t.Errorf("forced over a directory: %v", err)
	}
	spec.Devices = []int{0, 1}
	if _, err := Capture(context.Background(), spec, filepath.Join(dir, "new"), CaptureOptions{}); err == nil || !strings.Contains(err.Error(), "runs a model on one GPU") {
		t.Errorf("two devices: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("a bundle directory was made")
	}
}

func TestMachineKey(t *testing.T) {
	for gpu, want := range map[string]string{"NVIDIA H100 80GB HBM3": "h100-80gb-hbm3", "NVIDIA H200": "h200",
		"NVIDIA GeForce RTX 4090": "geforce-rtx-4090", "": "gpu", "Fake GPU": "fake-gpu"} {
		if got := MachineKey(gpu); got != want {
			t.Errorf("MachineKey(%q) = %q, want %q", gpu, got, want)
		}
	}
}

// measured.json as capture writes it is what replay reads.
func TestMeasuredFileFormat(t *testing.T) {
	f := measuredFile("w_prefill", &runnerInfo, &runnerResult, []float64{16.4, 16.0, 15.9})
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMeasured("measured.json", b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Lookup("w_prefill", 0, 1)
	if err != nil || r.WallS != 0.0161 || r.EnergyJ != 7.4 || r.EnergyJWithFirsts != 7.6 || r.IdleW != 70 || r.Iters != 130 || r.Machine != "h100-80gb-hbm3" ||
		!slices.Equal(r.SpanMS, []float64{15.2, 16.0, 17.9}) {
		t.Errorf("%+v, %v", r, err)
	}
	if !strings.Contains(string(b), `"median_ms_per_process":[16.4,16,15.9]`) {
		t.Errorf("measured.json lacks the processes' medians: %s", b)
	}
}

var (
	runnerInfo   = runner.Info{GPU: "NVIDIA H100 80GB HBM3", Torch: "2.11.0+cu130", CUDA: "13.0", Driver: "580.159.04"}
	runnerResult = runner.Result{Inferences: 130, Inside: 124.6, WallSPerInference: 0.0161, EventMSPerInference: 16.1,
		EnergyJPerInference: 7.4, EnergyJWithFirsts: 7.6, WindowS: 2.01, Ticks: 20, IdleW: 70, SpanMS: []float64{15.2, 16.0, 17.9}}
)

func TestMedianIndex(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want int
	}{
		{[]float64{23.2, 21.7, 22.1}, 2},
		{[]float64{21.7, 23.2}, 0},
		{[]float64{5}, 0},
		{[]float64{3, 3, 3}, 1},
		{[]float64{4, 1, 3, 2}, 3},
	} {
		if got := medianIndex(tc.v); got != tc.want {
			t.Errorf("medianIndex(%v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func TestSpreadWarning(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want string // a substring; "" for no warning
	}{
		{[]float64{183.6, 142.8, 163.9}, "spread by 29% (142.8 to 183.6 ms)"},
		{[]float64{486.6, 480.5, 487.2}, ""},
		{[]float64{10.28, 10.33, 10.27}, ""},
		{[]float64{21.0, 22.1}, "spread by 5%"},
		{[]float64{21.0, 22.0}, ""},
		{[]float64{22.88}, ""},
		{nil, ""},
		{[]float64{0, 5}, ""},
	} {
		got := spreadWarning(tc.v)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("spreadWarning(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// captureFails captures s into a fresh directory and checks that it fails
// with an error holding each of want, and leaves nothing behind.
func captureFails(t *testing.T, s *Spec, o CaptureOptions, want []string) {
	t.Helper()
	parent := t.TempDir()
	_, err := Capture(context.Background(), s, filepath.Join(parent, "b"), o)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if l := leftovers(t, parent, ""); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}
