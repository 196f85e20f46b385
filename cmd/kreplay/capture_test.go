package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kreplay capture of a tensor-parallel spec: a user's command on two
// stand-in GPUs writes a bundle with a trace per rank; a model whose
// runner cannot start its ranks (no PyTorch here) fails, the rank named,
// where a spec without "parallel" is refused before anything starts.
func TestCaptureTensorParallel(t *testing.T) {
	testdata := fakeRunner(t)
	t.Setenv("FAKE_DIST_DIR", t.TempDir())
	tmp := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const w = `"workload": {"kind": "prefill", "batch": 4, "seq": 512}`
	cmdSpec := write("cmd.json", `{"version": 1, "name": "mine_prefill", "command": {"argv": ["python3", "fake_command.py"], "dir": "`+testdata+`",
		"args": {"collective": true}}, `+w+`, "devices": [0, 1], "parallel": {"tensor": 2}}`)
	out := filepath.Join(tmp, "bundle")
	code, stdout, e := runCmd(t, "capture", cmdSpec, "-o", out, "-ticks", "5", "-no-binaries", "-processes", "1", "-no-schedule")
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, e)
	}
	if !strings.Contains(stdout, "bundle of workload mine_prefill") || !strings.Contains(stdout, "tensor-parallel 2 on devices [0 1]") {
		t.Errorf("stdout %q", stdout)
	}
	for _, f := range []string{"rank0.trace.json.gz", "rank1.trace.json.gz", "measured.json", "env.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("bundle: %v", err)
		}
	}

	model := write("model.json", `{"version": 1, "model": {"builtin": "llama-7b"}, `+w+`, "devices": [0, 1], "parallel": {"tensor": 2}}`)
	code, _, e = runCmd(t, "capture", model, "-o", filepath.Join(tmp, "m"), "-no-binaries", "-processes", "1", "-no-schedule")
	if exec.Command("python3", "-c", "import torch, transformers, pynvml").Run() == nil {
		t.Log("PyTorch is installed here: the model's ranks start")
	} else if code == 0 || !strings.Contains(e, "rank 0 of 2 (device 0):") || !strings.Contains(e, "full-model runner unavailable") ||
		strings.Contains(e, "runs a model on one GPU") {
		t.Errorf("model without PyTorch: exit %d: %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(tmp, "m")); err == nil {
		t.Error("a failed capture left its bundle")
	}
}
