package runner

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

// python3 or skip: the CPU tests run the helper module with stand-ins for
// torch and pynvml (testdata/fakemods).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
}

// startLoaded starts a runner with opt and loads the fake spec "ok"; the
// runner is closed when the test ends.
func startLoaded(t *testing.T, opt StartOptions) *Runner {
	t.Helper()
	r, err := Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := r.Load(fakeSpec("ok")); err != nil {
		t.Fatal(err)
	}
	return r
}

// fakeOptions starts a command under the stand-in torch and pynvml.
func fakeOptions(t *testing.T, argv ...string) StartOptions {
	t.Helper()
	mods, err := filepath.Abs(filepath.Join("testdata", "fakemods"))
	if err != nil {
		t.Fatal(err)
	}
	return StartOptions{Command: argv, Dir: "testdata", Env: []string{"PYTHONPATH=" + mods}}
}

// fakeSpec is what the user's build(spec) gets; mode steers fake_command.py.
func fakeSpec(mode string) map[string]any {
	return map[string]any{"version": 1, "devices": []int{0}, "seed": 7,
		"workload": map[string]any{"kind": "prefill", "batch": 1, "seq": 8},
		"command":  map[string]any{"argv": []string{"python3", "fake_command.py"}, "args": map[string]any{"mode": mode}}}
}

// A user's command served by kreplay_runner: every request of the
// protocol, on the stand-in GPU.
func TestHelperProtocol(t *testing.T) {
	needPython(t)
	var stderr strings.Builder
	opt := fakeOptions(t, "python3", "fake_command.py")
	opt.Stderr = &stderr
	r, err := Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.call(map[string]any{"cmd": "warmup"}, nil); err == nil || !strings.Contains(err.Error(), "no workload loaded") {
		t.Errorf("warm-up before load: %v", err)
	}
	info, err := r.Load(fakeSpec("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if info.GPU != "Fake GPU" || info.Driver != "0.0-fake" || info.Torch != "0.0-fake" {
		t.Errorf("load: %+v", info)
	}
	if n, err := r.Warmup(3, 50*time.Millisecond); err != nil || n < 3 {
		t.Errorf("warm-up: %d, %v", n, err)
	}
	res, err := r.Run(5, 1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The fake counter ticks every 20 ms at 100 W.
	if res.Ticks < 5 || res.WindowS < 0.08 || res.EnergyJPerInference <= 0 || res.IdleW < 90 || res.IdleW > 110 ||
		res.WallSPerInference < 0.002 || res.Inferences < 10 || !spread(res.SpanMS) {
		t.Errorf("run: %+v", res)
	}
	// The window without the first inference and the one with it agree
	// at the fake's constant power and even inferences.
	if r := res.EnergyJWithFirsts / res.EnergyJPerInference; !(r > 0.7 && r < 1.3) {
		t.Errorf("energy with the first inference %g J, without %g J", res.EnergyJWithFirsts, res.EnergyJPerInference)
	}
	// min_inferences keeps a run going past its energy window: 2 ticks
	// take about 60 ms, 150 inferences at least 300.
	if res, err := r.Run(2, 150, 10*time.Second); err != nil || res.Inferences < 150 {
		t.Errorf("run of at least 150 inferences: %d, %v", res.Inferences, err)
	}
	path := filepath.Join(t.TempDir(), "t.json.gz")
	// The trace is the last of warm-up + 1 inferences, the warm-up ones
	// profiled by the schedule; with none, no schedule.
	for _, c := range []struct {
		warmup int
		want   string
	}{{DefaultProfileWarmup, `"steps": 2, "warmup": 1`}, {0, `"steps": 1, "warmup": 0`}, {3, `"steps": 4, "warmup": 3`}} {
		if err := r.Capture(path, c.warmup); err != nil {
			t.Fatal(err)
		}
		if b := gunzip(t, path); !strings.Contains(b, `"fake": true`) || !strings.Contains(b, c.want) {
			t.Errorf("capture with %d warm-up inferences wrote %q, want %s", c.warmup, b, c.want)
		}
	}
	if err := r.Capture(path, -1); err == nil || !strings.Contains(err.Error(), "-1 warm-up inferences") {
		t.Errorf("capture with -1 warm-up inferences: %v", err)
	}
	env, err := r.Env()
	if err != nil {
		t.Fatal(err)
	}
	if env["gpu"] != "Fake GPU" || env["sm_count"] != 7.0 || env["cudnn"] != "9.10.2" || env["driver"] != "0.0-fake" || env["cpu"] == "" || env["cpu"] == nil {
		t.Errorf("env %v", env)
	}
	if _, err := r.RunRecorded(2, 1, 10*time.Second, ScheduleRequest{Path: filepath.Join(t.TempDir(), "s.txt")}); !errors.Is(err, ErrSchedule) || !strings.Contains(err.Error(), "KREPLAY_SCHED_LIB is not set") {
		t.Errorf("recorded run without the recorder: %v", err)
	}
	if _, err := r.RunRecorded(2, 1, 10*time.Second, ScheduleRequest{Path: "s.txt", Inferences: 2, Blocks: 4}); err == nil || !strings.Contains(err.Error(), "2 inferences recorded in 4 blocks") {
		t.Errorf("recorded run of 2 inferences in 4 blocks: %v", err)
	}
	if err := r.Record(true); err == nil || !strings.Contains(err.Error(), "KREPLAY_INJECT_LIB is not set") {
		t.Errorf("record without the recorder: %v", err)
	}
	if err := r.call(map[string]any{"cmd": "frobnicate"}, nil); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "noise on stdout from build") {
		t.Errorf("the command's print did not go to stderr: %q", stderr.String())
	}
}

func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Failures come back as errors that say what happened, by kind.
func TestHelperErrors(t *testing.T) {
	needPython(t)
	r, err := Start(fakeOptions(t, "python3", "fake_command.py"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Load(fakeSpec("oom"))
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "Tried to allocate 20.00 GiB") {
		t.Errorf("oom: %v", err)
	}
	// The runner goes on after a failure.
	if _, err := r.Load(fakeSpec("ok")); err != nil {
		t.Errorf("load after the failure: %v", err)
	}

	opt := fakeOptions(t, "python3", "fake_command.py")
	opt.Env = append(opt.Env, "FAKE_NO_GPU=1")
	r2, err := Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if _, err := r2.Load(fakeSpec("ok")); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "sees no CUDA device") {
		t.Errorf("no GPU: %v", err)
	}
}

// A command that breaks the protocol gets an error naming the command and
// what it did.
func TestProtocolViolations(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		mode  string
		start bool // fails at Start, within ready
		ready time.Duration
		want  []string
		is    error
	}{
		{"junk", false, time.Minute, []string{`command "python3 bad_command.py junk"`, "reply to load is not a JSON object", "Loading checkpoint shards"}, ErrProtocol},
		{"exit", false, time.Minute, []string{"exited (exit status 3) before replying to load", "giving up"}, nil},
		{"silent", true, 500 * time.Millisecond, []string{"no reply to start within 500ms"}, ErrProtocol},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			opt := StartOptions{Command: []string{"python3", "bad_command.py", tc.mode}, Dir: "testdata", ReadyTimeout: tc.ready}
			r, err := Start(opt)
			if err == nil {
				defer r.Close()
				_, err = r.Load(fakeSpec("ok"))
			} else if !tc.start {
				t.Fatalf("start: %v", err)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  StartOptions
		want string
	}{
		{StartOptions{Python: "/no/such/python3"}, "/no/such/python3"},
		{StartOptions{Command: []string{"/no/such/command", "x"}}, `command "/no/such/command"`},
	} {
		_, err := Start(tc.opt)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v", tc.opt, err)
		}
	}
	// A relative program runs from the command's directory.
	if _, err := exec.LookPath("python3"); err == nil {
		if r, err := Start(StartOptions{Command: []string{"./bad_command.sh", "silent"}, Dir: "testdata", ReadyTimeout: time.Millisecond}); err == nil || strings.Contains(err.Error(), "executable file not found") {
			t.Errorf("relative command: %v", err)
			if r != nil {
				r.Close()
			}
		}
	}
	if _, err := Start(StartOptions{Command: []string{}}); err == nil {
		t.Error("empty command: no error")
	}
}

// The helper comes first on PYTHONPATH, before the command's own.
func TestEnviron(t *testing.T) {
	t.Setenv("PYTHONPATH", "/mine")
	env := environ("/helper", []string{"PYTHONPATH=/extra", "A=1"})
	var path, a string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			path = p
		}
		if v, ok := strings.CutPrefix(kv, "A="); ok {
			a = v
		}
	}
	if path != "/helper:/extra:/mine" || a != "1" {
		t.Errorf("PYTHONPATH=%q A=%q", path, a)
	}
}

// The embedded Python files are what is in the package directory.
func TestEmbedded(t *testing.T) {
	for name, data := range map[string][]byte{"runner.py": runnerPy, "kreplay_runner.py": helperPy} {
		b, err := os.ReadFile(name)
		if err != nil || string(b) != string(data) {
			t.Errorf("%s: embedded copy differs (%v)", name, err)
		}
	}
}

// start starts the built-in runner, or skips (fails under
// KREPLAY_REQUIRE_GPU=1) where python3 with PyTorch is missing.
func start(t *testing.T) *Runner {
	t.Helper()
	var r *Runner
	gputest.Require(t, func() error {
		var err error
		r, err = Start(StartOptions{})
		return err
	})
	t.Cleanup(func() { r.Close() })
	return r
}

// Without PyTorch the runner says so plainly (this is the CPU machines'
// case; skipped where PyTorch is installed).
func TestStartWithoutTorch(t *testing.T) {
	needPython(t)
	if exec.Command("python3", "-c", "import torch, transformers, pynvml").Run() == nil {
		t.Skip("PyTorch is installed here")
	}
	_, err := Start(StartOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	t.Log(err)
}

// bloomPrefill is the resolved spec of the BLOOM-560M prefill workload
// of the shipped trace (workload.Builtin's, written out).
const bloomPrefill = `{"version": 1, "name": "bloom-560m_prefill",
 "model": {"builtin": "bloom-560m", "config": {"model_type": "bloom", "vocab_size": 250880, "hidden_size": 1024, "n_layer": 24, "n_head": 16}},
 "dtype": "f16", "attention": "eager", "workload": {"kind": "prefill", "batch": 4, "seq": 512}, "devices": [0], "seed": 0}`

// The real model runs, is metered, and its captured trace imports.
func TestGPURunAndCapture(t *testing.T) {
	r := start(t)
	info, err := r.Load(json.RawMessage(bloomPrefill))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", info)
	if info.Attention != "eager" {
		t.Errorf("attention %q, want eager", info.Attention)
	}
	if n, err := r.Warmup(3, 500*time.Millisecond); err != nil || n < 3 {
		t.Fatalf("warm-up: %d inferences, %v", n, err)
	}
	res, err := r.Run(10, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.WallSPerInference <= 0 || res.WallSPerInference > 1 || res.EnergyJPerInference <= 0 ||
		res.WindowS < 0.8 || res.Inside <= 0 || res.IdleW < 20 || res.IdleW > 400 || !spread(res.SpanMS) {
		t.Errorf("implausible run %+v", res)
	}
	path := filepath.Join(t.TempDir(), "bloom-560m_prefill.trace.json.gz")
	if err := r.Capture(path, DefaultProfileWarmup); err != nil {
		t.Fatal(err)
	}
	set, err := signatures.ImportFile(path, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Links.Activities < 500 || set.Source.Workload != "bloom-560m_prefill" {
		t.Errorf("captured trace: %d activities, workload %q", set.Links.Activities, set.Source.Workload)
	}
	env, err := r.Env()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("env %v", env)
	for _, k := range []string{"gpu", "sm_count", "memory_bytes", "driver", "cuda_runtime", "cublas", "cublaslt", "torch", "transformers"} {
		if env[k] == nil {
			t.Errorf("env lacks %s", k)
		}
	}
	if _, err := r.Warmup(0, 0); err != nil {
		t.Errorf("runner unusable after capture: %v", err)
	}
	// An unknown command is an error reply, and the runner goes on.
	if err := r.call(map[string]any{"cmd": "frobnicate"}, nil); err == nil {
		t.Error("unknown command: no error")
	}
}

// spread reports whether s is a run's spread: three positive, increasing
// times.
func spread(s []float64) bool {
	return len(s) == 3 && s[0] > 0 && s[0] <= s[1] && s[1] <= s[2]
}

func TestResultSpread(t *testing.T) {
	for _, tc := range []struct {
		span []float64
		want string
	}{
		{nil, ""},
		{[]float64{1, 2}, ""},
		{[]float64{15.2, 16, 17.9}, "median 16 ms, 10% under 15.2, 10% over 17.9"},
	} {
		if got := (&Result{SpanMS: tc.span}).Spread(); got != tc.want {
			t.Errorf("Spread(%v) = %q, want %q", tc.span, got, tc.want)
		}
	}
}

// fakeScheduler builds the stand-in schedule recorder
// (testdata/fake_sched.c) and returns the environment that gives it to
// the runner, and its log.
func fakeScheduler(t *testing.T) ([]string, string) {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc to build the stand-in schedule recorder")
	}
	dir := t.TempDir()
	lib, log := filepath.Join(dir, "libfake_sched.so"), filepath.Join(dir, "sched.log")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, filepath.Join("testdata", "fake_sched.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return []string{"KREPLAY_SCHED_LIB=" + lib, "FAKE_SCHED_LOG=" + log}, log
}

// A recorded run interleaves its measured blocks with recorded ones: the
// recorder armed (the probe's two arms, then a resume per later block),
// each recorded inference's start, tokens and end marked, CUPTI let go of
// after each block, the schedule flushed with the armed and the measured
// wall; the measured blocks make the run.
func TestHelperRunRecorded(t *testing.T) {
	needPython(t)
	env, log := fakeScheduler(t)
	opt := fakeOptions(t, "python3", "fake_command.py")
	opt.Env = append(opt.Env, env...)
	r := startLoaded(t, opt)
	path := filepath.Join(t.TempDir(), "schedule.txt")
	if _, err := r.RunRecorded(2, 1, 10*time.Second, ScheduleRequest{Path: path, Inferences: -1}); err == nil || !strings.Contains(err.Error(), "-1 inferences") {
		t.Errorf("schedule of -1 inferences: %v", err)
	}
	run, err := r.RunRecorded(6, 1, 10*time.Second, ScheduleRequest{Path: path, Inferences: 3, Process: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Schedule
	if res == nil || len(run.BlockWallMS) != DefaultScheduleBlocks || run.Ticks < 6 || run.Inferences < 3 {
		t.Fatalf("run %+v", run)
	}
	measured := int64(math.Round(run.WallSPerInference * 1e9))
	// The fake inference sleeps 2 ms.
	if res.Recorder != "cupti" || res.CostPairs != 0 || res.Inferences != 3 || res.MeasuredWallNS != measured || res.ArmedWallNS < 2e6 || res.ArmedWallNS > 1e9 ||
		res.OverheadNSPerInference != res.ArmedWallNS-res.MeasuredWallNS || res.Records != 6 || res.Outside != 3 || res.Blocks != 3 {
		t.Errorf("schedule %+v; measured %d ns", res, measured)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Marks outside the recorded blocks (the measured inferences' tokens)
	// never reach the recorder; 3 inferences in 2 recorded blocks.
	rec := "mark 1\ntokens 2\nmark 3\n"
	want := "arm 1\narm 1\nmark 4\n" + rec + rec + "pause\narm 2\nmark 4\n" + rec + "pause\n" +
		fmt.Sprintf("flush 1 %d %d\ndetach\n", res.ArmedWallNS, measured)
	if string(b) != want {
		t.Errorf("recorder log\n%s\nwant\n%s", b, want)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("process 1 overhead_ns_per_inference %d armed_wall_ns %d measured_wall_ns %d\n",
		res.OverheadNSPerInference, res.ArmedWallNS, measured)
	if !strings.HasPrefix(string(file), "kreplay-schedule 1\ncpu ") || !strings.Contains(string(file), head) {
		t.Errorf("schedule file\n%s\nlacks %q", file, head)
	}
	// The recorder refuses to arm: the reply says why, and the runner
	// goes on.
	opt.Env = append(opt.Env, "FAKE_SCHED_ARM=-1")
	r2, err := Start(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if _, err := r2.Load(fakeSpec("ok")); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.RunRecorded(2, 1, 10*time.Second, ScheduleRequest{Path: path}); !errors.Is(err, ErrSchedule) || !strings.Contains(err.Error(), "CUDA did not initialize it") {
		t.Errorf("a recorder that does not arm: %v", err)
	}
	if _, err := r2.Warmup(1, 0); err != nil {
		t.Errorf("runner unusable after the failure: %v", err)
	}
}

// In hook mode (the recorder preloaded) a recorded run records its
// measured inferences: the probe's two arms, then every measured block
// armed, each block's start and each inference's start, tokens and end
// marked; then the recorder disarmed and its cost measured from pairs of
// single inferences, armed (marked outside any inference) and disarmed in
// alternating order; the file's header holds their medians.
func TestHelperRunRecordedHooked(t *testing.T) {
	needPython(t)
	env, log := fakeScheduler(t)
	opt := fakeOptions(t, "python3", "fake_command.py")
	opt.Env = append(opt.Env, env...)
	opt.Env = append(opt.Env, "LD_PRELOAD="+strings.TrimPrefix(env[0], "KREPLAY_SCHED_LIB="))
	r := startLoaded(t, opt)
	path := filepath.Join(t.TempDir(), "schedule.txt")
	if _, err := r.RunRecorded(2, 1, 10*time.Second, ScheduleRequest{Path: path, CostPairs: -2}); err == nil || !strings.Contains(err.Error(), "-2 pairs") {
		t.Errorf("-2 cost pairs: %v", err)
	}
	run, err := r.RunRecorded(6, 1, 10*time.Second, ScheduleRequest{Path: path, Inferences: 4, Process: 1, CostPairs: 3})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Schedule
	if res == nil || len(run.BlockWallMS) != DefaultScheduleBlocks || run.Ticks < 6 || run.Inferences < 4 {
		t.Fatalf("run %+v", run)
	}
	// The fake inference sleeps 2 ms; every measured one is recorded.
	if res.Recorder != "hook" || res.Inferences != run.Inferences || res.CostPairs != 3 || res.Blocks != 3 ||
		res.ArmedWallNS < 2e6 || res.MeasuredWallNS < 2e6 || res.ArmedWallNS > 1e9 || res.MeasuredWallNS > 1e9 ||
		res.OverheadNSPerInference != res.ArmedWallNS-res.MeasuredWallNS || res.Records != 2*int64(run.Inferences) ||
		res.HookOld != 1 || res.OtherThreads != 5 {
		t.Errorf("schedule %+v; run of %d inferences", res, run.Inferences)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	inference := `mark 1\ntokens 2\nmark 3\n`
	armed, bare := `arm 2\nmark 0\nmark 0\narm 0\n`, `arm 0\n`
	want := regexp.MustCompile(`^arm 1\narm 1\n(?:mark 4\n(?:` + inference + `)+){3}arm 0\n` +
		armed + bare + bare + armed + armed + bare + fmt.Sprintf(`flush 1 %d %d\ndetach\n$`, res.ArmedWallNS, res.MeasuredWallNS))
	if !want.Match(b) {
		t.Errorf("recorder log\n%s\nwant\n%s", b, want)
	}
	if n := strings.Count(string(b), "mark 3\n"); n != run.Inferences {
		t.Errorf("%d inferences marked, %d measured", n, run.Inferences)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("process 1 overhead_ns_per_inference %d armed_wall_ns %d measured_wall_ns %d\n",
		res.OverheadNSPerInference, res.ArmedWallNS, res.MeasuredWallNS)
	if !strings.Contains(string(file), head) || strings.Count(string(file), "\nend ") != run.Inferences {
		t.Errorf("schedule file\n%s\nlacks %q or %d inferences", file, head, run.Inferences)
	}
}

// The runner meters the GPU CUDA runs on, found by its UUID: NVML numbers
// the machine's GPUs in its own order, which CUDA_VISIBLE_DEVICES can
// change (the stand-ins number CUDA device d as NVML's 7-d). A UUID NVML
// does not know falls back to the index only where CUDA_VISIBLE_DEVICES
// is unset; set, the load fails and says why.
func TestNVMLByUUID(t *testing.T) {
	needPython(t)
	for _, tc := range []struct {
		name    string
		env     []string
		want    string // gpu_uuid of CUDA device 2
		loadErr string
	}{
		{"by UUID", nil, "GPU-00000000-0000-0000-0000-000000000005", ""},
		{"unknown UUID, the index", []string{"FAKE_UUID=unknown"}, "GPU-00000000-0000-0000-0000-000000000002", ""},
		{"unknown UUID, devices renumbered", []string{"FAKE_UUID=unknown", "CUDA_VISIBLE_DEVICES=5,6,7"}, "", "CUDA_VISIBLE_DEVICES may have renumbered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := fakeOptions(t, "python3", "fake_command.py")
			opt.Env = append(opt.Env, tc.env...)
			r, err := Start(opt)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			spec := fakeSpec("ok")
			spec["devices"] = []int{2}
			_, err = r.Load(spec)
			if tc.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.loadErr) {
					t.Fatalf("load: %v, want %q", err, tc.loadErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env, err := r.Env()
			if err != nil {
				t.Fatal(err)
			}
			if got := env["gpu_uuid"]; got != tc.want {
				t.Errorf("CUDA device 2 metered as %v, want %s", got, tc.want)
			}
		})
	}
}
