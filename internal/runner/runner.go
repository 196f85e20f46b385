// Package runner drives kreplay's full-model runner: a Python program
// (runner.py, embedded) that builds a Hugging Face causal LM with random
// weights on a GPU and runs real inference, timed and metered with NVML,
// or captures its PyTorch-profiler trace. kreplay talks to it over a line
// protocol of JSON objects on the program's standard input and output.
package runner

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed runner.py
var script []byte

// ErrUnavailable is wrapped by Start's error when python3, PyTorch,
// transformers or pynvml is missing.
var ErrUnavailable = errors.New("full-model runner unavailable")

// Runner is a running runner.py process.
type Runner struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	dir    string
	stderr *strings.Builder
}

// Start writes the runner to a temporary directory and starts it with
// python (default "python3"). It returns once the runner is ready, or an
// error wrapping ErrUnavailable that says what is missing.
func Start(python string) (*Runner, error) {
	if python == "" {
		python = "python3"
	}
	path, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	dir, err := os.MkdirTemp("", "kreplay-runner-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "runner.py")
	if err := os.WriteFile(file, script, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &Runner{dir: dir, stderr: &strings.Builder{}}
	r.cmd = exec.Command(path, "-u", file)
	r.cmd.Stderr = r.stderr
	r.cmd.Env = append(os.Environ(), "NCCL_NVLS_ENABLE=0")
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r.out = bufio.NewScanner(stdout)
	r.out.Buffer(make([]byte, 64<<10), 16<<20)
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var ready struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := r.read(&ready); err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if !ready.OK {
		r.Close()
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, ready.Error)
	}
	return r, nil
}

// read decodes the next reply line into v.
func (r *Runner) read(v any) error {
	if !r.out.Scan() {
		err := r.out.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		if msg := strings.TrimSpace(r.stderr.String()); msg != "" {
			return fmt.Errorf("runner exited: %v: %s", err, lastLines(msg, 5))
		}
		return fmt.Errorf("runner exited: %v", err)
	}
	return json.Unmarshal(r.out.Bytes(), v)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// call sends one request and decodes its reply into v; a reply with
// "ok": false is returned as an error.
func (r *Runner) call(req map[string]any, v any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("runner %s: %w", req["cmd"], err)
	}
	var raw json.RawMessage
	if err := r.read(&raw); err != nil {
		return fmt.Errorf("runner %s: %w", req["cmd"], err)
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return fmt.Errorf("runner %s: bad reply %q: %w", req["cmd"], raw, err)
	}
	if !status.OK {
		return fmt.Errorf("runner %s: %s", req["cmd"], status.Error)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// Workload says which model runs which inference.
type Workload struct {
	Model     string `json:"model"`    // "bloom-560m" or "llama-7b"
	Kind      string `json:"workload"` // "prefill" or "generate"
	Batch     int    `json:"batch,omitempty"`
	Seq       int    `json:"seq,omitempty"`
	Prompt    int    `json:"prompt,omitempty"`
	NewTokens int    `json:"new_tokens,omitempty"`
	Device    int    `json:"device"`
}

// ParseWorkload reads a workload name as kreplay's sets name them,
// "bloom-560m_prefill" or "llama-7b_generate", with the shapes of the
// shared traces: prefill is batch 4 x 512 tokens, generate is a prompt of
// 32 tokens and 16 new ones at batch 1.
func ParseWorkload(name string) (Workload, error) {
	i := strings.LastIndex(name, "_")
	if i < 0 {
		return Workload{}, fmt.Errorf("workload %q: want MODEL_prefill or MODEL_generate", name)
	}
	w := Workload{Model: name[:i], Kind: name[i+1:]}
	switch w.Kind {
	case "prefill":
		w.Batch, w.Seq = 4, 512
	case "generate":
		w.Prompt, w.NewTokens = 32, 16
	default:
		return Workload{}, fmt.Errorf("workload %q: unknown kind %q (prefill, generate)", name, w.Kind)
	}
	switch w.Model {
	case "bloom-560m", "llama-7b":
	default:
		return Workload{}, fmt.Errorf("workload %q: the runner builds bloom-560m and llama-7b, not %q", name, w.Model)
	}
	return w, nil
}

// Info describes the runner's software and GPU.
type Info struct {
	GPU    string `json:"gpu"`
	Torch  string `json:"torch"`
	CUDA   string `json:"cuda"`
	Driver string `json:"driver"`
}

// Load builds the workload's model on the GPU.
func (r *Runner) Load(w Workload) (*Info, error) {
	req := map[string]any{"cmd": "load", "model": w.Model, "workload": w.Kind, "device": w.Device}
	for k, v := range map[string]int{"batch": w.Batch, "seq": w.Seq, "prompt": w.Prompt, "new_tokens": w.NewTokens} {
		if v > 0 {
			req[k] = v
		}
	}
	var info Info
	return &info, r.call(req, &info)
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
	// WindowS and Ticks are the energy window: every whole counter tick
	// inside the inferences' span on the GPU.
	WindowS float64 `json:"window_s"`
	Ticks   int     `json:"ticks"`
	// IdleW is the GPU's power just after, idle, from whole counter ticks.
	IdleW float64 `json:"idle_w"`
}

// Run runs inferences back to back until an energy window of at least
// minTicks counter ticks fits inside them (at most maxWait).
func (r *Runner) Run(minTicks int, maxWait time.Duration) (*Result, error) {
	var res Result
	err := r.call(map[string]any{"cmd": "run", "min_ticks": minTicks, "max_s": maxWait.Seconds()}, &res)
	return &res, err
}

// Capture profiles one inference and writes its Kineto trace (gzip) to path.
func (r *Runner) Capture(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return r.call(map[string]any{"cmd": "capture", "path": abs}, nil)
}

// Close stops the runner and removes its files.
func (r *Runner) Close() error {
	if r.in != nil {
		r.in.Write([]byte(`{"cmd":"quit"}` + "\n"))
		r.in.Close()
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		err = <-done
	}
	os.RemoveAll(r.dir)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return nil // the runner's own "cannot start" exit, already reported
	}
	return err
}
