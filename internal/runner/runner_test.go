package runner

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/signatures"
)

func TestParseWorkload(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Workload
		err  bool
	}{
		{"bloom-560m_prefill", Workload{Model: "bloom-560m", Kind: "prefill", Batch: 4, Seq: 512}, false},
		{"llama-7b_generate", Workload{Model: "llama-7b", Kind: "generate", Prompt: 32, NewTokens: 16}, false},
		{"llama-7b-tp2_prefill", Workload{}, true},
		{"bloom-560m_train", Workload{}, true},
		{"nounderscore", Workload{}, true},
	} {
		got, err := ParseWorkload(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseWorkload(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

// start starts the runner, or skips (fails under KREPLAY_REQUIRE_GPU=1)
// where python3 with PyTorch is missing.
func start(t *testing.T) *Runner {
	t.Helper()
	var r *Runner
	gputest.Require(t, func() error {
		var err error
		r, err = Start("")
		return err
	})
	t.Cleanup(func() { r.Close() })
	return r
}

// Without PyTorch the runner says so plainly (this is the CPU machines'
// case; skipped where PyTorch is installed).
func TestStartWithoutTorch(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	if exec.Command("python3", "-c", "import torch, transformers, pynvml").Run() == nil {
		t.Skip("PyTorch is installed here")
	}
	_, err := Start("")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	t.Log(err)
}

func TestStartNoPython(t *testing.T) {
	if _, err := Start("/no/such/python3"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
}

// The real model runs, is metered, and its captured trace imports.
func TestGPURunAndCapture(t *testing.T) {
	r := start(t)
	w, _ := ParseWorkload("bloom-560m_prefill")
	info, err := r.Load(w)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", info)
	if n, err := r.Warmup(3, 500*time.Millisecond); err != nil || n < 3 {
		t.Fatalf("warm-up: %d inferences, %v", n, err)
	}
	res, err := r.Run(10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.WallSPerInference <= 0 || res.WallSPerInference > 1 || res.EnergyJPerInference <= 0 ||
		res.WindowS < 0.8 || res.Inside <= 0 || res.IdleW < 20 || res.IdleW > 400 {
		t.Errorf("implausible run %+v", res)
	}
	path := filepath.Join(t.TempDir(), "bloom-560m_prefill.trace.json.gz")
	if err := r.Capture(path); err != nil {
		t.Fatal(err)
	}
	set, err := signatures.ImportFile(path, signatures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Links.Activities < 500 || set.Source.Workload != "bloom-560m_prefill" {
		t.Errorf("captured trace: %d activities, workload %q", set.Links.Activities, set.Source.Workload)
	}
	if _, err := r.Warmup(0, 0); err != nil {
		t.Errorf("runner unusable after capture: %v", err)
	}
	// An unknown command is an error reply, and the runner goes on.
	if err := r.call(map[string]any{"cmd": "frobnicate"}, nil); err == nil {
		t.Error("unknown command: no error")
	}
}
