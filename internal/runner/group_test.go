package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeGroup starts fake_command.py as a group of ranks on devices, with
// args for its build(spec); the ranks meet in a directory of the test's.
func fakeGroup(t *testing.T, devices []int, extraEnv ...string) *Group {
	t.Helper()
	needPython(t)
	t.Setenv("FAKE_DIST_DIR", t.TempDir())
	opt := fakeOptions(t, "python3", "fake_command.py")
	opt.Env = append(opt.Env, extraEnv...)
	g, err := StartGroup(opt, devices, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func groupSpec(args map[string]any) map[string]any {
	s := fakeSpec("ok")
	s["command"].(map[string]any)["args"] = args
	return s
}

// Two ranks driven in lock step: each told its rank, device and the one
// rendezvous, NVLink multicast off whatever the caller's environment
// says; every request answered by both, their runs of the same
// inferences (they decide together when to stop), a trace per rank.
func TestGroupLockStep(t *testing.T) {
	devices := []int{3, 5}
	g := fakeGroup(t, devices, "NCCL_NVLS_ENABLE=1")
	if g.Size() != 2 {
		t.Fatalf("size %d", g.Size())
	}
	spec := groupSpec(map[string]any{"collective": true})
	infos, err := g.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].GPU != "Fake GPU" || infos[1].GPU != "Fake GPU" {
		t.Errorf("infos %+v", infos)
	}
	// The load again, its replies whole: what each rank saw.
	seen := make([]map[string]any, 2)
	err = g.each(func(i int, r *Runner) error {
		s, err := g.rankSpec(spec, i)
		if err != nil {
			return err
		}
		return r.call(map[string]any{"cmd": "load", "spec": s}, &seen[i])
	})
	if err != nil {
		t.Fatal(err)
	}
	port := ""
	for i, m := range seen {
		env, _ := m["seen_env"].(map[string]any)
		dist, _ := m["seen_distributed"].(map[string]any)
		want := map[string]any{"RANK": strconv.Itoa(i), "WORLD_SIZE": "2", "LOCAL_RANK": strconv.Itoa(i), "MASTER_ADDR": "127.0.0.1",
			"KREPLAY_DEVICE": strconv.Itoa(devices[i]), "NCCL_NVLS_ENABLE": "0"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("rank %d: %s=%v, want %v", i, k, env[k], v)
			}
		}
		if i == 0 {
			port, _ = env["MASTER_PORT"].(string)
		}
		if env["MASTER_PORT"] != port || port == "" || dist["master_port"] != float64(g.port) || strconv.Itoa(g.port) != port {
			t.Errorf("rank %d: port %v (distributed %v), rank 0's %q, the group's %d", i, env["MASTER_PORT"], dist["master_port"], port, g.port)
		}
		if dist["rank"] != float64(i) || dist["world_size"] != 2.0 || dist["device"] != float64(devices[i]) || dist["backend"] != "nccl" {
			t.Errorf("rank %d: distributed %v", i, dist)
		}
		if m["seen_world"] != 2.0 || m["seen_rank"] != float64(i) || m["seen_device"] != float64(devices[i]) || m["rank"] != float64(i) {
			t.Errorf("rank %d: reply %v", i, m)
		}
	}
	ns, err := g.Warmup(3, 100*time.Millisecond)
	if err != nil || len(ns) != 2 || ns[0] != ns[1] || ns[0] < 3 {
		t.Errorf("warm-up: %v %v", ns, err)
	}
	res, err := g.Run(3, 5, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Inferences != res[1].Inferences || res[0].Inferences < 5 {
		t.Errorf("ranks ran %d and %d inferences, want the same, at least 5", res[0].Inferences, res[1].Inferences)
	}
	for i, r := range res {
		if r.EnergyJPerInference <= 0 || r.Ticks < 3 {
			t.Errorf("rank %d: %+v", i, r)
		}
	}
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "rank0.trace.json.gz"), filepath.Join(dir, "rank1.trace.json.gz")}
	if err := g.Capture(paths[:1], 0); err == nil {
		t.Error("capture with one path for two ranks: no error")
	}
	if err := g.Capture(paths, 1); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("trace %s: %v", p, err)
		}
	}
	envs, err := g.Env()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range envs {
		if e["rank"] != float64(i) || e["world_size"] != 2.0 || e["device"] != float64(devices[i]) {
			t.Errorf("rank %d: env %v", i, e)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// A rank that fails fails the step, named; the others, waiting for it in
// a collective, are stopped after the grace.
func TestGroupRankFails(t *testing.T) {
	g := fakeGroup(t, []int{0, 1, 2})
	_, err := g.Load(groupSpec(map[string]any{"fail_rank": 1}))
	if err == nil || !strings.Contains(err.Error(), "rank 1 of 3 (device 1): runner load: RuntimeError: rank 1 cannot load") {
		t.Errorf("load: %v", err)
	}

	g = fakeGroup(t, []int{0, 1})
	g.Grace = time.Second
	if _, err := g.Load(groupSpec(map[string]any{"fail_rank": 1, "fail_at": "run", "collective": true})); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = g.Warmup(10, 0)
	if err == nil || !strings.Contains(err.Error(), "rank 1 of 2 (device 1): runner warmup: RuntimeError: rank 1 failed in inference 4") ||
		!strings.Contains(err.Error(), "the group was stopped: ranks 0 did not reply within 1s") {
		t.Errorf("warm-up: %v", err)
	}
	if d := time.Since(t0); d > 20*time.Second {
		t.Errorf("the failure took %s", d)
	}
	g.Close() // the killed ranks' exit is no error of Close's
}

// A rank that cannot start fails the group, named, with the others
// stopped.
func TestGroupStartFails(t *testing.T) {
	needPython(t)
	t.Setenv("FAKE_DIST_DIR", t.TempDir())
	script := `import os, sys
if os.environ["RANK"] == "1":
    print('{"ok": false, "error": "no GPU for rank 1", "kind": "unavailable"}', flush=True)
    sys.exit(2)
import kreplay_runner
kreplay_runner.serve(lambda spec: (lambda: None))
`
	opt := fakeOptions(t, "python3", "-c", script)
	_, err := StartGroup(opt, []int{4, 6}, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "rank 1 of 2 (device 6):") || !strings.Contains(err.Error(), "no GPU for rank 1") {
		t.Errorf("error %v", err)
	}
	if _, err := StartGroup(opt, nil, nil); err == nil {
		t.Error("no devices: no error")
	}
}

// A group of one is a plain runner: no rendezvous, the spec as it is,
// errors as Runner's.
func TestGroupOfOne(t *testing.T) {
	g := fakeGroup(t, []int{0})
	var reply map[string]any
	if err := g.Rank(0).call(map[string]any{"cmd": "load", "spec": fakeSpec("ok")}, &reply); err != nil {
		t.Fatal(err)
	}
	if _, ok := reply["seen_distributed"]; ok || reply["rank"] != nil {
		t.Errorf("a group of one was told of ranks: %v", reply)
	}
	if s, _ := g.rankSpec(fakeSpec("ok"), 0); s.(map[string]any)["distributed"] != nil {
		t.Errorf("rank spec %v", s)
	}
	_, err := g.Load(fakeSpec("oom"))
	if !errors.Is(err, ErrOutOfMemory) || strings.Contains(err.Error(), "rank 0") {
		t.Errorf("error %v", err)
	}
}

// NVLink multicast stays off whatever the caller's environment says.
func TestEnvironNVLS(t *testing.T) {
	t.Setenv("NCCL_NVLS_ENABLE", "1")
	env := environ("/helper", []string{"NCCL_NVLS_ENABLE=1"})
	last := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NCCL_NVLS_ENABLE="); ok {
			last = v
		}
	}
	if last != "0" {
		t.Errorf("NCCL_NVLS_ENABLE=%q last", last)
	}
}
