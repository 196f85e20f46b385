package workload

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tpSpec is fake_command.py as a tensor-parallel workload on devices,
// each inference meeting the other ranks; args are added to its own.
func tpSpec(t *testing.T, devices []int, args string) *Spec {
	t.Helper()
	t.Setenv("FAKE_DIST_DIR", t.TempDir())
	s := commandSpec(t, `["python3", "fake_command.py"]`, "ok")
	s.Devices, s.Parallel = devices, &Parallel{Tensor: len(devices)}
	s.Command.Args = json.RawMessage(`{"collective": true` + args + `}`)
	return s
}

// A tensor-parallel capture on two stand-in GPUs: one runner per rank in
// every process, the bundle with each rank's trace, kernels and
// schedules, measured.json in its per-rank form with each GPU's energy,
// env.json with every rank's.
func TestCaptureTensorParallel(t *testing.T) {
	fakeGPU(t)
	rec := newFakeRecorder(t)
	spec := tpSpec(t, []int{2, 5}, "")
	parent := t.TempDir()
	dir := filepath.Join(parent, "tp")
	var progress strings.Builder
	b, err := Capture(context.Background(), spec, dir, CaptureOptions{Ticks: 5, Processes: 2, Kernels: rec, Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	m := b.Manifest
	if want := []string{"rank0.trace.json.gz", "rank1.trace.json.gz"}; !reflect.DeepEqual(m.Traces, want) {
		t.Errorf("traces %v, want %v", m.Traces, want)
	}
	if m.Kernels != "" || len(m.Ranks) != 2 {
		t.Fatalf("kernels %q, ranks %+v", m.Kernels, m.Ranks)
	}
	for r, rf := range m.Ranks {
		want := RankFiles{Rank: r, Device: spec.Devices[r], Trace: RankTraceFile(r), Kernels: RankKernelsDir(r)}
		if os.Getenv("FAKE_SCHED_LOG") != "" {
			want.Schedules = []string{RankScheduleFile(r, 0), RankScheduleFile(r, 1)}
		}
		if !reflect.DeepEqual(rf, want) {
			t.Errorf("ranks[%d] %+v, want %+v", r, rf, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "kernels", "rank"+string(rune('0'+r)), "index.json")); err != nil {
			t.Errorf("rank %d's kernels: %v", r, err)
		}
	}
	if os.Getenv("FAKE_SCHED_LOG") != "" && len(m.Schedules) != 4 {
		t.Errorf("schedules %v, want 2 ranks x 2 processes", m.Schedules)
	}
	meas, err := b.Measured()
	if err != nil {
		t.Fatal(err)
	}
	if len(meas.Runs) != 2 {
		t.Fatalf("measured runs %+v", meas.Runs)
	}
	for r := range 2 {
		run, err := meas.Lookup(spec.Name, r, 2)
		if err != nil {
			t.Fatal(err)
		}
		if run.Machine != "2xfake-gpu_tp2" || run.GPU != "Fake GPU" || run.EnergyJ <= 0 || run.WallS <= 0 || run.Iters < MinInferences {
			t.Errorf("rank %d's run %+v", r, run)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]map[string]struct {
		Device int `json:"device"`
		Runs   map[string]struct {
			Procs []float64 `json:"median_ms_per_process"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for r, dev := range spec.Devices {
		got := file["2xfake-gpu_tp2"]["rank"+string(rune('0'+r))]
		if got.Device != dev || len(got.Runs[spec.Name].Procs) != 2 {
			t.Errorf("rank %d in measured.json: %+v\n%s", r, got, raw)
		}
	}
	var env struct {
		World int `json:"world_size"`
		Ranks []struct {
			Rank   int `json:"rank"`
			Device int `json:"device"`
		} `json:"ranks"`
	}
	raw, _ = os.ReadFile(filepath.Join(dir, EnvFile))
	if err := json.Unmarshal(raw, &env); err != nil || env.World != 2 || len(env.Ranks) != 2 || env.Ranks[1].Rank != 1 || env.Ranks[1].Device != 5 {
		t.Errorf("env.json %s (%v)", raw, err)
	}
	sets, err := b.Sets()
	if err != nil || len(sets) != 2 {
		t.Fatalf("sets: %d, %v", len(sets), err)
	}
	back, err := b.Spec()
	if err != nil || back.World() != 2 || !reflect.DeepEqual(back.Devices, spec.Devices) {
		t.Errorf("spec read back: %+v, %v", back, err)
	}
	for _, want := range []string{"tensor-parallel 2 on devices [2 5]", "rank 1 of 2", "capture: rank 1 (device 5):", "rank 1's trace:"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if l := leftovers(t, parent, "tp"); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A rank that cannot load, or a device its torch does not see, or that
// fails an inference, fails the capture with the rank named, and leaves
// nothing behind. (The other ranks, waiting for it in a collective, give
// up after FAKE_DIST_TIMEOUT here, or are stopped after the group's
// grace.)
func TestCaptureTensorParallelFailures(t *testing.T) {
	fakeGPU(t)
	for _, tc := range []struct {
		name, args, env string
		devices         []int
		want            []string
	}{
		{"rank fails to load", `, "fail_rank": 1`, "", []int{0, 1}, []string{"loading it (command \"python3 fake_command.py\" in ",
			", 2 ranks on devices [0 1])", "rank 1 of 2 (device 1): runner load: RuntimeError: rank 1 cannot load"}},
		{"device not there", "", "FAKE_GPUS=2 FAKE_DIST_TIMEOUT=2", []int{0, 3}, []string{"rank 1 of 2 (device 3):", "full-model runner unavailable", "device 3: torch sees 2 CUDA device(s)"}},
		{"rank fails running", `, "fail_rank": 0, "fail_at": "run"`, "FAKE_DIST_TIMEOUT=2", []int{0, 1}, []string{"rank 0 of 2 (device 0): runner warmup: RuntimeError: rank 0 failed in inference 4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range strings.Fields(tc.env) {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			captureFails(t, tpSpec(t, tc.devices, tc.args), CaptureOptions{Ticks: 5, Processes: 1, NoSchedule: true}, tc.want)
		})
	}
}
