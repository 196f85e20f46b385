package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/workload"
)

// A bad -measured file stops the run before any GPU is opened, with an
// error naming the file and the field.
func TestRunMeasuredErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "m.json")
	os.WriteFile(bad, []byte(`{"tp": {"rank0": {"rank": 0, "world": 2, "runs": {"w": {"wall_s_per_iter": "slow"}}}}}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-measured", bad}, bad + `: tp.rank0.runs.w.wall_s_per_iter: want a number, got "slow"`},
		{[]string{"run", "-measured", filepath.Join(dir, "none.json")}, "none.json: no such file"},
	} {
		code, _, e := runCmd(t, tc.args...)
		if code != 1 || !strings.Contains(e, tc.want) {
			t.Errorf("kreplay %v: exit %d, stderr %q; want exit 1 and %q", tc.args, code, e, tc.want)
		}
	}
}

func TestCompareMeasured(t *testing.T) {
	m, err := workload.ParseMeasured("m.json", []byte(`{"tp": {
		"rank0": {"rank": 0, "world": 2, "runs": {"w": {"wall_s_per_iter": 0.1, "energy_j_per_iter": 30}}},
		"rank1": {"rank": 1, "world": 2, "runs": {"w": {"wall_s_per_iter": 0.1, "energy_j_per_iter": 32}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	set := func(workload string, rank int) *signatures.Set {
		return &signatures.Set{Source: signatures.Source{Workload: workload, Rank: rank, WorldSize: 2}}
	}
	tests := []struct {
		name      string
		sets      []*signatures.Set
		idle      []deviceIdle
		wantIdleJ []float64
		wantWarn  []string
	}{
		{"both", []*signatures.Set{set("w", 0), set("w", 1)}, []deviceIdle{{Watts: 100}, {Device: 1, Watts: 50}}, []float64{6, 3}, nil},
		{"no idle power", []*signatures.Set{set("w", 0), set("w", 1)}, nil, []float64{0, 0}, nil},
		{"one idle failed", []*signatures.Set{set("w", 0), set("w", 1)}, []deviceIdle{{Watts: 100}, {Device: 1, Err: "x"}}, []float64{6, 0},
			[]string{"rank 1: no idle power measured"}},
		{"unknown workload", []*signatures.Set{set("w", 0), set("v", 1)}, nil, []float64{0, 0}, []string{`m.json: no run of workload "v" on rank 1 of 2`}},
	}
	for _, tt := range tests {
		ranks := []predict.RankPrediction{{Rank: 0, ComputeNS: 40e6, BusyJ: 20}, {Rank: 1, ComputeNS: 40e6, BusyJ: 21}}
		warn := compareMeasured(ranks, tt.sets, m, tt.idle)
		if len(warn) != len(tt.wantWarn) {
			t.Errorf("%s: warnings %q, want %q", tt.name, warn, tt.wantWarn)
		}
		for i, w := range tt.wantWarn {
			if i < len(warn) && !strings.Contains(warn[i], w) {
				t.Errorf("%s: warning %q, want %q", tt.name, warn[i], w)
			}
		}
		for i, p := range ranks {
			if d := p.IdleJ - tt.wantIdleJ[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: rank %d idle %.3f J, want %.3f", tt.name, i, p.IdleJ, tt.wantIdleJ[i])
			}
		}
	}
}

// -roofline turns the clock probe on, so that the hardware roof is taken
// at the SM clock measured on the GPU; without it nothing is probed.
func TestRunRooflineProbesClock(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{{[]string{"-roofline"}, true}, {nil, false}} {
		f, _, err := parseRunFlags(tt.args, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		if f.measure.ClockProbe != tt.want {
			t.Errorf("%q: ClockProbe %v, want %v", tt.args, f.measure.ClockProbe, tt.want)
		}
	}
}

// -shared-energy N is the suite's SharedEnergy, off by default.
func TestRunSharedEnergyFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int
	}{{[]string{"-shared-energy", "8"}, 8}, {nil, 0}} {
		f, _, err := parseRunFlags(tt.args, &strings.Builder{})
		if err != nil {
			t.Fatal(err)
		}
		if f.sharedEnergy != tt.want {
			t.Errorf("%q: shared energy %d, want %d", tt.args, f.sharedEnergy, tt.want)
		}
	}
}

// -devices all spreads a one-trace run over every local GPU of device 0's
// kind (found when the run opens its GPUs), starting from device 0;
// without it, and with spreadDefault off, a run stays on -device.
func TestRunDevicesAll(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		wantSpread bool
		wantDevs   []int
	}{
		{[]string{"-devices", "all"}, true, []int{0}},
		{[]string{"-devices", " all "}, true, []int{0}},
		{nil, spreadDefault, []int{0}},
		{[]string{"-device", "1"}, false, []int{1}},
		{[]string{"-devices", "1,0"}, false, []int{1, 0}},
		{[]string{"-families"}, false, []int{0}},
	} {
		f, _, err := parseRunFlags(tt.args, &strings.Builder{})
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if f.spread != tt.wantSpread || !slices.Equal(f.devices, tt.wantDevs) {
			t.Errorf("%q: spread %v devices %v, want %v %v", tt.args, f.spread, f.devices, tt.wantSpread, tt.wantDevs)
		}
	}
	code, _, e := runCmd(t, "run", "-roofline", "-devices", "all")
	if code != exitUsage || !strings.Contains(e, "-roofline: one device at a time (-devices all)") {
		t.Errorf("-roofline -devices all: exit %d, stderr %q", code, e)
	}
}

// -roofline places signatures on one GPU's peaks: with several devices it
// stops before any GPU is opened, saying so.
func TestRunRooflineOneDevice(t *testing.T) {
	code, _, e := runCmd(t, "run", "-roofline", "-devices", "0,1")
	if code != exitUsage || !strings.Contains(e, "-roofline: one device at a time (-devices 0,1)") {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}

// -skip takes comma-separated signature IDs of the sets, not parts of
// another (with -binaries=false, a captured binary's part is one again);
// an unknown ID is an error naming it.
func TestParseSkip(t *testing.T) {
	set := func(file string, sigs ...*signatures.Signature) *signatures.Set {
		return &signatures.Set{Source: signatures.Source{File: file}, Signatures: sigs}
	}
	sets := []*signatures.Set{
		set("r0.json", &signatures.Signature{ID: "a"}, &signatures.Signature{ID: "p", PartOf: "a"},
			&signatures.Signature{ID: "q", Binary: &signatures.Binary{PartOf: "a"}}),
		set("r1.json", &signatures.Signature{ID: "b"}),
	}
	tests := []struct {
		arg      string
		binaries bool
		want     string // the IDs skipped, sorted
		err      string
	}{
		{"", true, "[]", ""},
		{"a", true, "[a]", ""},
		{" a , b ,", true, "[a b]", ""},
		{"q", true, "[q]", ""},
		{"a,nope", true, "", "-skip a,nope: no signature nope in r0.json, r1.json"},
		{"p", true, "", "-skip p: signature p is part of a and replays with it: skip a"},
		{"q", false, "", "-skip q: signature q is part of a and replays with it: skip a"},
	}
	for _, tt := range tests {
		skip, err := parseSkip(tt.arg, sets, tt.binaries)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("parseSkip(%q, binaries %v) error %v, want %q", tt.arg, tt.binaries, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSkip(%q): %v", tt.arg, err)
			continue
		}
		ids := slices.Sorted(maps.Keys(skip))
		if fmt.Sprint(ids) != tt.want {
			t.Errorf("parseSkip(%q) = %v, want %s", tt.arg, ids, tt.want)
		}
		for id, reason := range skip {
			if reason != skipReason {
				t.Errorf("parseSkip(%q): %s's reason %q", tt.arg, id, reason)
			}
		}
	}
}

// A known -skip ID lets predict go on to its CPU part (exit status 3
// without a GPU).
func TestPredictSkip(t *testing.T) {
	set, _, err := load(defaultInput)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.bench")
	code, _, e := runCmd(t, "predict", "-no-model", "-device", "999", "-o", out, "-skip", set.Signatures[0].ID)
	if code != exitNoMeasurement {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}

// An unknown -skip ID stops run and predict before any GPU is opened.
func TestSkipUnknownID(t *testing.T) {
	for _, args := range [][]string{{"run", "-skip", "nope"}, {"predict", "-no-model", "-device", "999", "-skip", "nope"}} {
		code, _, e := runCmd(t, args...)
		if code != exitError || !strings.Contains(e, "-skip nope: no signature nope in ") {
			t.Errorf("kreplay %v: exit %d, stderr %q", args, code, e)
		}
	}
}

// The error of a run whose CUDA context was lost names the signature that
// faulted, counts those not measured and says how to go on.
func TestLostError(t *testing.T) {
	fault := &cuda.Error{Call: "cuMemGetInfo", Code: cuda.CodeIllegalAddress, Name: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	lost := func(id string, n int, skip ...string) error {
		return &replay.ContextLostError{ID: id, Label: "grouped gemm " + id, Err: fault, NotMeasured: n, Skip: skip}
	}
	tests := []struct {
		name   string
		lost   []error
		resume bool
		want   string
	}{
		{"none", []error{nil}, true, ""},
		{"no devices", nil, true, ""},
		{"one", []error{lost("s7", 60, "s7")}, true,
			"the CUDA context was lost when signature s7 (grouped gemm s7) faulted: cuMemGetInfo: CUDA_ERROR_ILLEGAL_ADDRESS; " +
				"60 signatures after it were not measured; run again with -resume -skip s7"},
		{"one after", []error{lost("s7", 1, "s3", "s7")}, true,
			"the CUDA context was lost when signature s7 (grouped gemm s7) faulted: cuMemGetInfo: CUDA_ERROR_ILLEGAL_ADDRESS; " +
				"1 signature after it was not measured; run again with -resume -skip s3,s7"},
		{"no -out", []error{lost("s7", 0, "s7")}, false,
			"the CUDA context was lost when signature s7 (grouped gemm s7) faulted: cuMemGetInfo: CUDA_ERROR_ILLEGAL_ADDRESS; " +
				"0 signatures after it were not measured; run again with -skip s7 (with -out FILE, -resume would reuse the results measured)"},
		{"two GPUs", []error{fmt.Errorf("GPU 0: %w", lost("s9", 2, "s9")), nil, fmt.Errorf("GPU 2: %w", lost("s1", 3, "s1"))}, true,
			"GPU 0: the CUDA context was lost when signature s9 (grouped gemm s9) faulted: cuMemGetInfo: CUDA_ERROR_ILLEGAL_ADDRESS; " +
				"GPU 2: the CUDA context was lost when signature s1 (grouped gemm s1) faulted: cuMemGetInfo: CUDA_ERROR_ILLEGAL_ADDRESS; " +
				"5 signatures after them were not measured; run again with -resume -skip s1,s9"},
	}
	for _, tt := range tests {
		err := lostError(tt.lost, tt.resume)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// A run that lost the CUDA context goes on in a new process with -resume
// and -skip after its own arguments, unless it cannot reuse its results or
// has gone on maxGoOn times already.
func TestGoOn(t *testing.T) {
	for _, c := range []struct {
		args, want []string
	}{
		{[]string{"-budget", "30ms", "bundle"}, []string{"predict", "-budget", "30ms", "bundle", "-resume", "-skip", "s3,s7"}},
		// A process that went on already: its -resume and -skip are replaced.
		{[]string{"-budget", "30ms", "bundle", "-resume", "-skip", "s3"}, []string{"predict", "-budget", "30ms", "bundle", "-resume", "-skip", "s3,s7"}},
		{[]string{"--skip=s3", "-resume=true", "bundle"}, []string{"predict", "bundle", "-resume", "-skip", "s3,s7"}},
	} {
		if diff := cmp.Diff(c.want, goOnArgs("predict", c.args, "s3,s7")); diff != "" {
			t.Errorf("%q: arguments (-want +got):\n%s", c.args, diff)
		}
	}
	var stderr strings.Builder
	if _, ok := goOn("run", nil, &contextLost{skip: "s7"}, io.Discard, &stderr); ok || stderr.Len() != 0 {
		t.Errorf("run without -out went on (%v) or said %q", ok, stderr.String())
	}
	t.Setenv(envGoOn, strconv.Itoa(maxGoOn))
	if _, ok := goOn("predict", nil, &contextLost{skip: "s7", resume: true}, io.Discard, &stderr); ok ||
		!strings.Contains(stderr.String(), "not going on: 3 processes have lost the CUDA context") {
		t.Errorf("after %d processes: went on %v, said %q", maxGoOn, ok, stderr.String())
	}
}

// spreadWanted: -devices all always spreads; otherwise only the default
// does, where no GPU is named and nothing given needs one GPU.
func TestSpreadWanted(t *testing.T) {
	none := map[string]bool{}
	for _, tt := range []struct {
		name   string
		all    bool
		given  map[string]bool
		oneGPU bool
		want   bool
	}{
		{"asked", true, none, false, true},
		{"asked, with -families", true, none, true, true},
		{"nothing given", false, none, false, spreadDefault},
		{"-device given", false, map[string]bool{"device": true}, false, false},
		{"-devices given", false, map[string]bool{"devices": true}, false, false},
		{"a flag that needs one GPU", false, none, true, false},
	} {
		if got := spreadWanted(tt.all, tt.given, tt.oneGPU); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
