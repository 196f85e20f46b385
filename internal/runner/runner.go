// Package runner drives a full-model runner: a program that runs real
// inference on a GPU, timed and metered with NVML, or profiles it, and
// talks to kreplay over a line protocol of JSON objects on its standard
// input and output (documented in kreplay_runner.py).
//
// Two Python files are embedded: kreplay_runner.py, the protocol with the
// timing, metering, profiling, kernel recording and host schedule
// recording, which any inference script can use (serve(build)); and
// runner.py, kreplay's own runner, which builds a Hugging Face causal LM
// from a workload spec. Start runs runner.py, or a user's command with
// kreplay_runner.py on its PYTHONPATH.
package runner

import (
	"bufio"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

var (
	//go:embed runner.py
	runnerPy []byte
	//go:embed kreplay_runner.py
	helperPy []byte
)

// HelperModule is the name of the Python helper module a user's command
// imports (kreplay_runner.serve).
const HelperModule = "kreplay_runner"

// Errors wrapped by the runner's errors.
var (
	// ErrUnavailable: python3, PyTorch, transformers or pynvml is
	// missing, or PyTorch sees no usable CUDA device.
	ErrUnavailable = errors.New("full-model runner unavailable")
	// ErrOutOfMemory: the runner ran out of GPU memory
	// (torch.cuda.OutOfMemoryError).
	ErrOutOfMemory = errors.New("out of GPU memory")
	// ErrProtocol: the program broke the line protocol (a line that is
	// not a JSON object, or no reply).
	ErrProtocol = errors.New("runner protocol")
	// ErrSchedule: the host schedule of a recorded run (RunRecorded) could
	// not be recorded (no recorder, or CUPTI refused it); nothing was
	// measured.
	ErrSchedule = errors.New("host schedule")
)

// DefaultReadyTimeout is how long Start waits for the program's first
// line when StartOptions.ReadyTimeout is zero.
const DefaultReadyTimeout = 5 * time.Minute

// StartOptions say which runner to start and how.
type StartOptions struct {
	// Python runs the built-in runner (default "python3"); unused with
	// Command.
	Python string
	// Command, when set, is the argv of a user's program that speaks the
	// protocol (through kreplay_runner.serve) instead of the built-in
	// runner. Command[0] is looked up in PATH, or, when it is a relative
	// path, in Dir.
	Command []string
	// Dir is the working directory of Command (default: the current one).
	Dir string
	// Env is added to the program's environment ("KEY=value"), after
	// kreplay's own PYTHONPATH; NCCL_NVLS_ENABLE=0 comes last, forced.
	Env []string
	// Stderr, when set, also receives the program's standard error.
	Stderr io.Writer
	// ReadyTimeout bounds the wait for the program's first line
	// (default DefaultReadyTimeout).
	ReadyTimeout time.Duration
}

// Runner is a running runner program.
type Runner struct {
	name      string // the program, for messages: "runner.py" or the command
	cmd       *exec.Cmd
	in        io.WriteCloser
	lines     chan []byte // stdout lines; closed at EOF
	outErr    error       // why stdout ended, once lines is closed
	dir       string
	stderr    *tail
	exited    chan struct{} // closed once the program has exited
	waitErr   error
	closeOnce sync.Once
}

// Start writes the runner's Python files to a temporary directory and
// starts the built-in runner or opt.Command. It returns once the program
// says it is ready, or an error: wrapping ErrUnavailable when python3 or
// its modules are missing, ErrProtocol when the program's first line is
// not the protocol's.
func Start(opt StartOptions) (*Runner, error) {
	argv, name, err := opt.argv()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kreplay-runner-")
	if err != nil {
		return nil, err
	}
	for file, data := range map[string][]byte{"runner.py": runnerPy, HelperModule + ".py": helperPy} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if opt.Command == nil {
		argv = append(argv, "-u", filepath.Join(dir, "runner.py"))
	}
	r := &Runner{name: name, dir: dir, stderr: &tail{max: 64 << 10}, lines: make(chan []byte, 16), exited: make(chan struct{})}
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Dir = opt.Dir
	r.cmd.Stderr = r.stderr
	if opt.Stderr != nil {
		r.cmd.Stderr = io.MultiWriter(r.stderr, opt.Stderr)
	}
	r.cmd.Env = environ(dir, opt.Env)
	// The program's stdout is a pipe of our own, not StdoutPipe: Wait,
	// which runs beside the reads, would close StdoutPipe's and lose the
	// last lines. WaitDelay bounds the wait for the stderr copy, which
	// grandchildren (torch.compile's workers) may hold open.
	r.cmd.WaitDelay = 5 * time.Second
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stdout, pw, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r.cmd.Stdout = pw
	err = r.cmd.Start()
	pw.Close()
	if err != nil {
		stdout.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, name, err)
	}
	go r.scan(stdout)
	go func() {
		r.waitErr = r.cmd.Wait()
		close(r.exited)
	}()
	if err := r.ready(opt.ReadyTimeout); err != nil {
		r.Kill()
		r.Close()
		return nil, err
	}
	return r, nil
}

// argv returns the program to run (without the built-in runner's script)
// and its name for messages.
func (o StartOptions) argv() ([]string, string, error) {
	if len(o.Command) > 0 {
		prog := o.Command[0]
		if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) && o.Dir != "" {
			prog = filepath.Join(o.Dir, prog) // relative to the working directory it runs in
		}
		path, err := exec.LookPath(prog)
		if err != nil {
			return nil, "", fmt.Errorf("%w: command %q: %v", ErrUnavailable, o.Command[0], err)
		}
		return append([]string{path}, o.Command[1:]...), fmt.Sprintf("command %q", strings.Join(o.Command, " ")), nil
	}
	if o.Command != nil {
		return nil, "", fmt.Errorf("runner: empty command")
	}
	python := o.Python
	if python == "" {
		python = "python3"
	}
	path, err := exec.LookPath(python)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return []string{path}, "runner.py", nil
}

// environ is the program's environment: ours, then kreplay's, then
// extra; the helper's directory comes first on PYTHONPATH, before any
// PYTHONPATH of extra or ours.
func environ(helperDir string, extra []string) []string {
	path := []string{helperDir}
	var rest []string
	for _, kv := range extra {
		if p, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			path = append(path, p)
			continue
		}
		rest = append(rest, kv)
	}
	if p := os.Getenv("PYTHONPATH"); p != "" {
		path = append(path, p)
	}
	env := append(os.Environ(), "PYTHONPATH="+strings.Join(path, string(os.PathListSeparator)),
		"PYTHONUNBUFFERED=1")
	// NVLink multicast (NVLS) stays off whatever extra says: the last
	// value of a variable is the one the program sees.
	return append(append(env, rest...), "NCCL_NVLS_ENABLE=0")
}

// scan reads the program's standard output line by line.
func (r *Runner) scan(stdout io.ReadCloser) {
	defer stdout.Close()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		r.lines <- append([]byte(nil), sc.Bytes()...)
	}
	r.outErr = sc.Err()
	close(r.lines)
}

// ready reads the program's first line.
func (r *Runner) ready(timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	raw, err := r.readLine("start", timeout)
	if err != nil {
		if errors.Is(err, ErrProtocol) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var st status
	if err := json.Unmarshal(raw, &st); err != nil {
		return r.protocolError("start", raw)
	}
	if !st.OK {
		return fmt.Errorf("%w: %s", ErrUnavailable, st.Error)
	}
	if !st.Ready {
		return fmt.Errorf("%w: %s: first line %q is not the ready line {\"ok\": true, \"ready\": true}", ErrProtocol, r.name, raw)
	}
	return nil
}

// status is the part of every reply that says how it went.
type status struct {
	OK    bool   `json:"ok"`
	Ready bool   `json:"ready"`
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// readLine returns the program's next line; timeout 0 waits for ever.
func (r *Runner) readLine(what string, timeout time.Duration) ([]byte, error) {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case line, ok := <-r.lines:
		if ok {
			return line, nil
		}
	case <-timer:
		return nil, fmt.Errorf("%w: %s: no reply to %s within %s", ErrProtocol, r.name, what, timeout)
	}
	// Standard output ended: the program exited or closed it.
	err := r.exitError(what)
	if r.outErr != nil { // set before lines was closed
		err = fmt.Errorf("%w (reading its output: %v)", err, r.outErr)
	}
	return nil, err
}

// exitError describes a program that stopped before replying to what,
// after waiting a little for its exit status.
func (r *Runner) exitError(what string) error {
	status := "closed its standard output"
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
	}
	select {
	case <-r.exited:
		status = "exited"
		if r.waitErr != nil {
			status += " (" + r.waitErr.Error() + ")"
		}
	default:
	}
	msg := fmt.Sprintf("%s %s before replying to %s", r.name, status, what)
	if s := strings.TrimSpace(r.stderr.String()); s != "" {
		msg += "; its last words: " + lastLines(s, 5)
	}
	return errors.New(msg)
}

func (r *Runner) protocolError(what string, line []byte) error {
	s := string(line)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Errorf("%w: %s: the reply to %s is not a JSON object: %q (standard output carries only "+
		"protocol lines: print to stderr, or use %s.serve, which does it for you)", ErrProtocol, r.name, what, s, HelperModule)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// call sends one request and decodes its reply into v; a reply with
// "ok": false is returned as an error, wrapping ErrOutOfMemory or
// ErrUnavailable by its kind.
func (r *Runner) call(req map[string]any, v any) error {
	cmd, _ := req["cmd"].(string)
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("runner %s: %w", cmd, r.exitError(cmd))
	}
	raw, err := r.readLine(cmd, 0)
	if err != nil {
		return fmt.Errorf("runner %s: %w", cmd, err)
	}
	var st status
	if json.Unmarshal(raw, &st) != nil || len(raw) == 0 || raw[0] != '{' {
		return r.protocolError(cmd, raw)
	}
	if !st.OK {
		err := fmt.Errorf("%s", st.Error)
		switch st.Kind {
		case "oom":
			err = fmt.Errorf("%w: %s", ErrOutOfMemory, st.Error)
		case "unavailable":
			err = fmt.Errorf("%w: %s", ErrUnavailable, st.Error)
		case "schedule":
			err = fmt.Errorf("%w: %s", ErrSchedule, st.Error)
		}
		return fmt.Errorf("runner %s: %w", cmd, err)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %s: reply to %s: %v", ErrProtocol, r.name, cmd, err)
	}
	return nil
}

// Info describes the runner's software and GPU, as load replies.
type Info struct {
	GPU    string `json:"gpu"`
	Torch  string `json:"torch"`
	CUDA   string `json:"cuda"`
	Driver string `json:"driver"`
	// Attention is the attention implementation the model got (the
	// built-in runner says; "" otherwise).
	Attention string `json:"attention,omitempty"`
	// Compile says how the built-in runner compiled the model where that
	// is not the spec's plain reading (a generate under CUDA graphs runs
	// transformers' own compile); "" otherwise.
	Compile string `json:"compile,omitempty"`
}

// Load builds the workload on the GPU: spec is the resolved workload spec
// (it is sent as JSON; the program's build(spec) gets it).
func (r *Runner) Load(spec any) (*Info, error) {
	var info Info
	return &info, r.call(map[string]any{"cmd": "load", "spec": spec}, &info)
}

// Warmup runs at least n inferences and for at least minTime, and
// returns how many it ran.
func (r *Runner) Warmup(n int, minTime time.Duration) (int, error) {
	var res struct {
		Inferences int `json:"inferences"`
	}
	err := r.call(map[string]any{"cmd": "warmup", "n": n, "min_s": minTime.Seconds()}, &res)
	return res.Inferences, err
}

// Result is a timed, metered run of inferences, run back to back without
// host synchronization between them (as the shared traces' measured.json
// timed them).
type Result struct {
	Inferences int `json:"inferences"`
	// Inside is the number of inferences inside the energy window (with
	// fractions at its ends).
	Inside float64 `json:"inside"`
	// WallSPerInference is the host time from the first launch to the end
	// of the last inference, over the count; EventMSPerInference the
	// inferences' span on the GPU's clock (CUDA events), over the count.
	WallSPerInference   float64 `json:"wall_s_per_inference"`
	EventMSPerInference float64 `json:"event_ms_per_inference"`
	EnergyJPerInference float64 `json:"energy_j_per_inference"`
	// EnergyJWithFirsts is the energy per inference with each measured
	// block's first inference counted too: that inference starts on a GPU
	// idle since the block's synchronize, and EnergyJPerInference, Inside,
	// WindowS and Ticks leave it out (they are over the inferences that
	// follow another back to back). 0 from an older runner, whose window
	// held the first inferences.
	EnergyJWithFirsts float64 `json:"energy_j_per_inference_with_firsts,omitempty"`
	// SpanMS is the run's spread: the 10th, 50th and 90th percentiles of
	// the time between consecutive inferences' ends on the GPU, in ms (a
	// launch-bound run's host sets it). Empty from an older runner.
	SpanMS []float64 `json:"span_ms,omitempty"`
	// WindowS and Ticks are the energy window: every whole counter tick
	// inside the inferences' span on the GPU.
	WindowS float64 `json:"window_s"`
	Ticks   int     `json:"ticks"`
	// IdleW is the GPU's power just after, idle, from whole counter ticks.
	IdleW float64 `json:"idle_w"`
	// Clocks is what NVML said of the SM clock and throttling inside the
	// energy window (nil where the runner did not sample it).
	Clocks *Clocks `json:"clocks,omitempty"`
	// TPOTMS is a generate's time per output token: the 10th, 50th and
	// 90th percentiles (ms) of the intervals between the host reaching
	// consecutive tokens within an inference (the runner's mark_token);
	// Tokens the tokens marked per inference. Empty where the program
	// marks no tokens.
	TPOTMS []float64 `json:"tpot_ms,omitempty"`
	Tokens float64   `json:"tokens_per_inference,omitempty"`
	// BlockWallMS is, for a recorded run (RunRecorded), each measured
	// block's wall per inference in ms, in run order; Schedule what the
	// runner says of the host schedule it recorded (in the blocks, hook
	// mode; between them, CUPTI mode).
	BlockWallMS []float64       `json:"block_wall_ms,omitempty"`
	Schedule    *ScheduleResult `json:"schedule,omitempty"`
	// ScheduleError says why a recorded run's schedule was not written
	// (the measured run stands); "" otherwise.
	ScheduleError string `json:"schedule_error,omitempty"`
	// ProcessesMS, where a run stands for several measured processes (a
	// bundle's measured run: its median process's), is each process's
	// median inference in ms; the runner never sets it.
	ProcessesMS []float64 `json:"median_ms_per_process,omitempty"`
}

// Spread says how far the inferences' spans spread, where the runner
// measured it: "median A ms, 10% under B, 10% over C"; "" otherwise.
func (r *Result) Spread() string {
	if len(r.SpanMS) != 3 {
		return ""
	}
	return fmt.Sprintf("median %.4g ms, 10%% under %.4g, 10%% over %.4g", r.SpanMS[1], r.SpanMS[0], r.SpanMS[2])
}

// MedianMS is the run's median inference in ms (the middle of SpanMS) and
// true, or its mean wall time per inference and false where the runner
// measured no spread.
func (r *Result) MedianMS() (float64, bool) {
	if len(r.SpanMS) == 3 && r.SpanMS[1] > 0 {
		return r.SpanMS[1], true
	}
	return r.WallSPerInference * 1e3, false
}

// Clocks summarises the SM clock and NVML's clocks-event reasons sampled
// every 10 ms inside a measured run's energy window.
type Clocks struct {
	MeanMHz float64 `json:"sm_clock_mhz"`
	MinMHz  float64 `json:"sm_clock_min_mhz"`
	MaxMHz  float64 `json:"sm_clock_max_mhz"`
	// PowerCapped is the share of samples in which the software power cap
	// held the clocks down; Throttled the share with any power or thermal
	// slowdown.
	PowerCapped float64 `json:"power_capped"`
	Throttled   float64 `json:"throttled"`
	Samples     int     `json:"clock_samples"`
	// TempC and MaxTempC are the GPU's mean and highest temperature (C)
	// over the samples; 0 where NVML did not give it.
	TempC    float64 `json:"gpu_temp_c,omitempty"`
	MaxTempC float64 `json:"gpu_temp_max_c,omitempty"`
}

// String is a one-line summary: "SM 1720 MHz (1410-1980), power-capped
// 35% of the window", and where sampled ", GPU 41 C (max 44 C)".
func (c *Clocks) String() string {
	s := fmt.Sprintf("SM %.0f MHz (%.0f-%.0f), power-capped %.0f%% of the window", c.MeanMHz, c.MinMHz, c.MaxMHz, c.PowerCapped*100)
	if c.MaxTempC > 0 {
		s += fmt.Sprintf(", GPU %.0f C (max %.0f C)", c.TempC, c.MaxTempC)
	}
	return s
}

// Run runs inferences back to back until an energy window of at least
// minTicks counter ticks fits inside them and at least minInferences ran
// (at most maxWait).
func (r *Runner) Run(minTicks, minInferences int, maxWait time.Duration) (*Result, error) {
	return r.run(map[string]any{"cmd": "run", "min_ticks": minTicks, "min_inferences": minInferences, "max_s": maxWait.Seconds()})
}

func (r *Runner) run(req map[string]any) (*Result, error) {
	var res Result
	var c Clocks
	reply := struct {
		*Result
		*Clocks
	}{&res, &c}
	err := r.call(req, &reply)
	if err == nil && c.Samples > 0 {
		res.Clocks = &c
	}
	return &res, err
}

// Capture profiles one inference and writes its Kineto trace (gzip) to
// path, after warmup inferences profiled and discarded (the profiler's
// schedule): the profiler's start disturbs the inference right after it
// (DefaultProfileWarmup).
func (r *Runner) Capture(path string, warmup int) error {
	if warmup < 0 {
		return fmt.Errorf("capture: %d warm-up inferences, want 0 or more", warmup)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return r.call(map[string]any{"cmd": "capture", "path": abs, "warmup_steps": warmup}, nil)
}

// DefaultProfileWarmup is how many inferences the capture profiles and
// discards before the one it traces. The first inference after the
// profiler starts is not the measured runs' steady state: its memory
// operations run markedly slower than replayed, and one profiled warm-up
// inference before it brings them to the replay's times (see
// results/h100/generality/README.md).
const DefaultProfileWarmup = 1

// Record runs one inference with the kernel recorder armed: the program
// must have been started with the recorder injected (StartOptions.Env:
// CUDA_INJECTION64_PATH and KREPLAY_INJECT_LIB, the library whose
// kr_inject_arm, kr_inject_flush and kr_inject_detach it calls). With
// detach the recorder then unsubscribes from CUPTI for good, so that the
// profiler can trace the same process.
func (r *Runner) Record(detach bool) error {
	return r.call(map[string]any{"cmd": "record", "detach": detach}, nil)
}

// DefaultScheduleInferences is how many inferences a host schedule
// records when none is said.
const DefaultScheduleInferences = 10

// ScheduleResult is what the runner says of a host schedule it recorded
// (RunRecorded).
type ScheduleResult struct {
	// Inferences is how many inferences the file holds.
	Inferences int `json:"inferences"`
	// Recorder is how the schedule was recorded: "hook" (the recorder
	// preloaded, the driver's entry points interposed: the measured
	// inferences are the recorded ones) or "cupti" (CUPTI's callbacks,
	// recorded blocks interleaved with the measured ones).
	Recorder string `json:"recorder"`
	// ArmedWallNS and MeasuredWallNS are the walls per inference the
	// recorder's overhead is measured from, OverheadNSPerInference the
	// first less the second (signed: noise may make it negative). Hook
	// mode: the median of CostPairs single inferences armed and of as
	// many disarmed, alternating, each from a synchronize to a
	// synchronize, in the same process after the measured run. CUPTI
	// mode: the wall per inference of the recorded blocks and of the
	// measured ones (the recorder loaded but let go of); the difference
	// then holds the host's moves between neighbouring blocks too.
	ArmedWallNS            int64 `json:"armed_wall_ns"`
	MeasuredWallNS         int64 `json:"measured_wall_ns"`
	OverheadNSPerInference int64 `json:"overhead_ns_per_inference"`
	// CostPairs is how many pairs of single inferences measured the
	// overhead (hook mode; 0 in CUPTI mode).
	CostPairs int `json:"cost_pairs"`
	// OverheadNSPerCall is the recorder's own cost per recorded call, from
	// the runner's probe before it recorded (a tiny kernel launched
	// unrecorded, then recorded); the file's process line holds it.
	OverheadNSPerCall int64 `json:"overhead_ns_per_call"`
	// Records is how many records the recorder kept; Lost the calls past
	// its buffer's end (KREPLAY_SCHED_RECORDS), Outside the records
	// outside an inference, Incomplete the inferences left out without
	// their end.
	Records    int64 `json:"records"`
	Lost       int64 `json:"lost"`
	Outside    int64 `json:"outside"`
	Incomplete int64 `json:"incomplete"`
	// OtherThreads is the calls of threads other than the inference's
	// (a distributed run's watchdog polling its events), left out.
	OtherThreads int64 `json:"other_threads"`
	// HookOld is how many driver entry points got a function of another
	// ABI than the wrappers take (CUDA 12.0's; an older one, or a later
	// one the table has no _v2 for), passed through unrecorded; HookSecond how many
	// lookups resolved a wrapped call to another definition than its
	// wrapper's first, served by the wrapper (hook mode).
	HookOld    int64 `json:"hook_old"`
	HookSecond int64 `json:"hook_second"`
	// Blocks is how many measured blocks the run had: recorded (hook
	// mode) or interleaved with the recorded ones (CUPTI mode).
	Blocks int `json:"blocks"`
}

// ScheduleRequest says what host schedule a recorded run records.
type ScheduleRequest struct {
	// Path is the text file the schedule is written to
	// (docs/whole-inference.md's format).
	Path string
	// Inferences is how many inferences it records (0:
	// DefaultScheduleInferences): in hook mode at least, all the
	// measured ones; in CUPTI mode exactly, between the measured blocks.
	Inferences int
	// Process is the index the file's header gives the process.
	Process int
	// Blocks is how many measured blocks the run has (0:
	// DefaultScheduleBlocks); in CUPTI mode with a block of recorded
	// inferences between each two.
	Blocks int
	// CostPairs is how many pairs of single inferences, armed and
	// disarmed, measure the recorder's overhead in hook mode (0:
	// DefaultCostPairs).
	CostPairs int
}

// DefaultCostPairs is how many pairs of single inferences measure the
// recorder's overhead in hook mode when none is said.
const DefaultCostPairs = 5

// DefaultScheduleBlocks is how many measured blocks a recorded run
// interleaves with its recorded ones when none is said: measured,
// recorded, measured, recorded, measured.
const DefaultScheduleBlocks = 3

// RunRecorded is Run with the host's schedule recorded in the same run,
// by the schedule recorder the program was started with (StartOptions.Env:
// inject.ScheduleEnv). In hook mode (the recorder preloaded and
// interposing the driver's entry points) every measured inference is
// recorded: the run's s.Blocks measured blocks (each with its share of
// minTicks and minInferences, at least s.Inferences in all) run armed,
// and the recorder's overhead is measured after them in the same
// process from s.CostPairs pairs of single inferences, armed and
// disarmed. In CUPTI mode (the recorder loaded through
// CUDA_INJECTION64_PATH) a block of recorded inferences (s.Inferences in
// all) runs between each two measured blocks, so that the host's speed,
// which moves within a process, is close in both; the recorder lets go
// of CUPTI after each, so that it slows no measured inference. The
// result's Schedule says how the recording went; a recorder that cannot
// record fails the run with ErrSchedule.
func (r *Runner) RunRecorded(minTicks, minInferences int, maxWait time.Duration, s ScheduleRequest) (*Result, error) {
	n, blocks := cmp.Or(s.Inferences, DefaultScheduleInferences), cmp.Or(s.Blocks, DefaultScheduleBlocks)
	if n < 0 || blocks < 2 || blocks > n+1 {
		return nil, fmt.Errorf("run: %d inferences recorded in %d blocks, want 1 or more in 2 to %d", n, blocks, n+1)
	}
	pairs := cmp.Or(s.CostPairs, DefaultCostPairs)
	if pairs < 0 {
		return nil, fmt.Errorf("run: %d pairs of inferences to measure the recorder's cost, want 1 or more", pairs)
	}
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		return nil, err
	}
	return r.run(map[string]any{"cmd": "run", "min_ticks": minTicks, "min_inferences": minInferences, "max_s": maxWait.Seconds(),
		"schedule": map[string]any{"path": abs, "n": n, "process": s.Process, "blocks": blocks, "pairs": pairs}})
}

// Env returns what the program knows of its GPU and software: the GPU's
// name, SM count and memory, the driver, the CUDA runtime, cuBLAS,
// cuBLASLt, cuDNN, NCCL, PyTorch, Triton and transformers versions and
// the host's CPU (the reply of the "env" request, without "ok").
func (r *Runner) Env() (map[string]any, error) {
	var env map[string]any
	if err := r.call(map[string]any{"cmd": "env"}, &env); err != nil {
		return nil, err
	}
	delete(env, "ok")
	return env, nil
}

// Kill stops the program at once; calls waiting for a reply return an
// error. Close must still be called.
func (r *Runner) Kill() {
	if r.cmd.Process != nil {
		r.cmd.Process.Kill()
	}
}

// Close stops the program (quit, then a kill after 10 s) and removes its
// files.
func (r *Runner) Close() error {
	var err error
	r.closeOnce.Do(func() {
		r.in.Write([]byte(`{"cmd":"quit"}` + "\n"))
		r.in.Close()
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
			r.Kill()
			<-r.exited
		}
		os.RemoveAll(r.dir)
		err = r.waitErr
		var ee *exec.ExitError
		if errors.As(err, &ee) && (ee.ExitCode() == 2 || !ee.Exited()) {
			err = nil // the runner's own "cannot start" exit, already reported; or killed
		}
	})
	return err
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
