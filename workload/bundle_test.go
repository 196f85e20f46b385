package workload

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
	"github.com/kreplay/kreplay/signatures"
)

func embeddedBundle(t testing.TB, name string) *Bundle {
	t.Helper()
	fsys, err := traces.Bundle(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenBundle(fsys, "embedded:"+name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every embedded bundle reads: its spec, its measured run for each of its
// traces' sets, its environment.
func TestEmbeddedBundles(t *testing.T) {
	want := map[string]struct {
		workload string
		traces   int
		gpu      string
		runnable bool
		wallS    float64
	}{
		"h100_bloom-560m_prefill":     {"bloom-560m_prefill", 1, "NVIDIA H100 80GB HBM3", true, 0.01613517315000017},
		"h100_bloom-560m_generate":    {"bloom-560m_generate", 1, "NVIDIA H100 80GB HBM3", true, 0.2701072139999994},
		"h100_llama-7b_prefill":       {"llama-7b_prefill", 1, "NVIDIA H100 80GB HBM3", true, 0.062372749900000454},
		"2xh200_llama-7b-tp2_prefill": {"llama-7b-tp2_prefill", 2, "NVIDIA H200", false, 0.12220999210000016},
	}
	if len(traces.Bundles()) != len(want) {
		t.Errorf("bundles %v", traces.Bundles())
	}
	for _, name := range traces.Bundles() {
		t.Run(name, func(t *testing.T) {
			w := want[name]
			b := embeddedBundle(t, name)
			if b.Manifest.Workload != w.workload || len(b.Manifest.Traces) != w.traces || len(b.Schedules()) != 0 || b.MeasuredSchedule() != -1 {
				t.Errorf("manifest %+v", b.Manifest)
			}
			s, err := b.Spec()
			if err != nil {
				t.Fatal(err)
			}
			if (s.Runnable() == nil) != w.runnable {
				t.Errorf("Runnable: %v", s.Runnable())
			}
			// The spec is the built-in one with the trace's shapes.
			if s.Model == nil || s.Model.Builtin == "" {
				t.Fatalf("spec %+v", s)
			}
			kind := s.Workload.Kind
			builtin, err := Builtin(s.Model.Builtin, kind)
			if err != nil {
				t.Fatal(err)
			}
			if s.Workload != builtin.Workload || s.DType != builtin.DType || s.Attention != builtin.Attention || string(s.Model.Config) != string(builtin.Model.Config) {
				t.Errorf("spec %+v is not the built-in %+v", s, builtin)
			}
			env, err := b.Env()
			if err != nil || env.GPU != w.gpu || env.SMCount != 132 || env.Torch != "2.11.0+cu130" {
				t.Errorf("env %+v, %v", env, err)
			}
			sets, err := b.Sets()
			if err != nil {
				t.Fatal(err)
			}
			for i, set := range sets {
				if set.Source.Workload != w.workload || set.Source.File != name+"/"+b.Manifest.Traces[i] || len(set.Signatures) == 0 {
					t.Errorf("set %d: %+v", i, set.Source)
				}
				run, err := b.ModelRun(set)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && run.WallSPerInference != w.wallS || run.EnergyJPerInference <= 0 || run.IdleW != 0 {
					t.Errorf("set %d: measured %+v", i, run)
				}
			}
		})
	}
}

// writeBundle writes a bundle from the embedded prefill bundle's files,
// with bundle.json as given.
func writeBundle(t *testing.T, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	fsys, err := traces.Bundle("h100_bloom-560m_prefill")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"spec.json", "trace.json.gz", "measured.json", "env.json"} {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, BundleFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadBundle(t *testing.T) {
	good := Manifest{Version: 1, Workload: "bloom-560m_prefill", Spec: "spec.json", Traces: []string{"trace.json.gz"},
		Measured: "measured.json", Env: "env.json", Created: "2026-11-24T00:00:00Z", Kreplay: "test"}
	js, _ := json.Marshal(good)
	dir := writeBundle(t, string(js))
	if !IsBundle(dir) || IsBundle(filepath.Dir(dir)) {
		t.Errorf("IsBundle")
	}
	b, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := b.Sets()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sets[0].Source.File, filepath.Base(dir)+"/trace.json.gz"; got != want {
		t.Errorf("source file %q, want %q", got, want)
	}
	js2 := strings.Replace(string(js), `"workload":"bloom-560m_prefill"`, `"workload":"other"`, 1)
	if _, err := (mustRead(t, writeBundle(t, js2))).Spec(); err == nil || !strings.Contains(err.Error(), `names "other"`) {
		t.Errorf("spec of another workload: %v", err)
	}
	for _, tc := range []struct{ name, edit, want string }{
		{"unknown field", `"kreplay":"test","extra":1`, `unknown field "extra"`},
		{"bad version", `"version":3`, "version 3 is not a version this kreplay reads (want 1 to 2)"},
		{"version 0", `"version":0`, "version 0 is not a version this kreplay reads"},
		{"schedules in version 1", `"schedules":["spec.json"]`, "schedules and measured_process are version 2's"},
		{"measured process in version 1", `"measured_process":0`, "schedules and measured_process are version 2's"},
		{"missing trace", `"traces":["trace.json.gz","rank1.trace.json.gz"]`, "rank1.trace.json.gz is missing"},
		{"no traces", `"traces":[]`, "want at least one trace"},
		{"escaping path", `"spec":"../spec.json"`, `"../spec.json" is not a file name inside the bundle`},
		{"bad created", `"created":"yesterday"`, `created "yesterday"`},
		{"bad workload", `"workload":"a b"`, `workload "a b" is not a workload name`},
		{"kernels not a dir", `"kernels":"spec.json"`, `kernels "spec.json" is not a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := string(js)
			key := tc.edit[:strings.Index(tc.edit, ":")]
			i := strings.Index(m, key+":")
			if i < 0 {
				m = strings.TrimSuffix(m, "}") + "," + tc.edit + "}"
			} else {
				end := i + strings.IndexAny(m[i:], ",}")
				if strings.HasPrefix(tc.edit, `"traces"`) {
					end = i + strings.Index(m[i:], "]") + 1
				}
				m = m[:i] + tc.edit + m[end:]
			}
			dir := writeBundle(t, m)
			_, err := ReadBundle(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, BundleFile)+": ") {
				t.Errorf("bundle.json %s: error %v, want %q", m, err, tc.want)
			}
		})
	}
	if _, err := ReadBundle(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a bundle: no bundle.json") {
		t.Errorf("empty directory: %v", err)
	}
	// A version 1 bundle has no schedules.
	if len(b.Schedules()) != 0 || b.MeasuredSchedule() != -1 {
		t.Errorf("version 1: schedules %v, measured %d", b.Schedules(), b.MeasuredSchedule())
	}
	if _, err := b.OpenSchedule(0); err == nil || !strings.Contains(err.Error(), "no host schedule 0 (the bundle has 0)") {
		t.Errorf("OpenSchedule(0) of a bundle without: %v", err)
	}
}

// A version 2 bundle lists its schedules, gzip'ed, and the process whose
// run it keeps; OpenSchedule gunzips them, MeasuredSchedule finds the
// kept process's, and a listed schedule must be there.
func TestBundleSchedules(t *testing.T) {
	mp := 1
	m := Manifest{Version: BundleVersion, Workload: "bloom-560m_prefill", Spec: "spec.json", Traces: []string{"trace.json.gz"},
		Measured: "measured.json", Env: "env.json", Created: "2026-11-28T00:00:00Z", Kreplay: "test",
		Schedules: []string{ScheduleFile(0), ScheduleFile(1)}, MeasuredProcess: &mp}
	js, _ := json.Marshal(m)
	if !strings.Contains(string(js), `"schedules":["schedule.p0.txt.gz","schedule.p1.txt.gz"],"measured_process":1`) {
		t.Errorf("manifest %s", js)
	}
	dir := writeBundle(t, string(js))
	texts := []string{"kreplay-schedule 1\nprocess 0\n", "kreplay-schedule 1\nprocess 1\n"}
	for i, text := range texts {
		src := filepath.Join(t.TempDir(), "s.txt")
		os.WriteFile(src, []byte(text), 0o644)
		if err := gzipFile(src, filepath.Join(dir, ScheduleFile(i))); err != nil {
			t.Fatal(err)
		}
	}
	b, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.MeasuredSchedule() != 1 || len(b.Schedules()) != 2 {
		t.Errorf("schedules %v, measured %d", b.Schedules(), b.MeasuredSchedule())
	}
	for i, want := range texts {
		r, err := b.OpenSchedule(i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want || r.Close() != nil {
			t.Errorf("schedule %d: %q, %v; want %q", i, got, err, want)
		}
	}
	os.WriteFile(filepath.Join(dir, ScheduleFile(0)), []byte("not gzip"), 0o644)
	if _, err := b.OpenSchedule(0); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ScheduleFile(0))) {
		t.Errorf("a schedule that is not gzip'ed: %v", err)
	}
	os.Remove(filepath.Join(dir, ScheduleFile(1)))
	if _, err := ReadBundle(dir); err == nil || !strings.Contains(err.Error(), "schedule.p1.txt.gz is missing") {
		t.Errorf("a missing schedule: %v", err)
	}
	neg := -1
	m.MeasuredProcess, m.Schedules = &neg, nil
	js, _ = json.Marshal(m)
	if _, err := ReadBundle(writeBundle(t, string(js))); err == nil || !strings.Contains(err.Error(), "measured_process -1") {
		t.Errorf("measured process -1: %v", err)
	}
}

func mustRead(t *testing.T, dir string) *Bundle {
	t.Helper()
	b, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A bundle captured on an H100 with its kernels (a torch.compile'd
// Llama-3.2-1B-shaped prefill, scripts/gpu/specs/l1b-compile-prefill.json;
// the module images and snapshots left out) reads back: every traced kernel
// matches a recorded launch, the signatures get their binaries and most
// their producers, and WithoutBinaries gives back the plain trace's
// signatures.
func TestCapturedBundle(t *testing.T) {
	b, err := ReadBundle(filepath.Join("testdata", "l1b-compiled_prefill"))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := b.Sets()
	if err != nil {
		t.Fatal(err)
	}
	s := sets[0]
	m := s.Kernels
	if m == nil || m.Traced != 234 || m.Matched != m.Traced || m.Recorded != 234 || m.Signatures != 24 {
		t.Fatalf("kernel match %+v", m)
	}
	var binaries, producers, plainOnly int
	alone := map[string]bool{}
	for _, sig := range s.Signatures {
		bin := sig.Binary
		if bin == nil {
			if sig.Activity == signatures.ActivityKernel {
				t.Errorf("kernel signature %s without its binary", sig.ID)
			}
			continue
		}
		binaries++
		if sig.PartOf != "" || sig.Unreplayable != "" {
			t.Errorf("%s with a binary is still part of %q / unreplayable %q", sig.ID, sig.PartOf, sig.Unreplayable)
		}
		if bin.Launch == nil || bin.Launch.Module == "" || !signatures.SameFunction(sig.Kernel, bin.Launch.Name) {
			t.Errorf("%s: binary %+v for kernel %s", sig.ID, bin.Launch, sig.Kernel)
		}
		if len(bin.Producers) > 0 {
			producers++
		}
		for _, p := range bin.Producers {
			if err := p.Check(bin.Launch); err != nil {
				t.Errorf("%s: %v", sig.ID, err)
			}
			if p.Launch.Name == bin.Launch.Name {
				t.Errorf("%s: primed by a launch of its own function %s", sig.ID, p.Launch.Name)
			}
		}
		if bin.PartOf != "" || bin.Unreplayable != "" {
			plainOnly++
			alone[sig.ID] = true
		}
	}
	// A plain trace stands in for every Inductor kernel from its arguments
	// (signatures.TritonStandIn), so none of these is unreplayable alone.
	if binaries != 24 || producers < binaries/2 || plainOnly != 0 {
		t.Errorf("%d binaries, %d producers, %d signatures a plain trace cannot replay alone", binaries, producers, plainOnly)
	}
	s.WithoutBinaries()
	restored := 0
	for _, sig := range s.Signatures {
		if sig.Binary != nil {
			t.Fatalf("%s keeps its binary", sig.ID)
		}
		if alone[sig.ID] && (sig.PartOf != "" || sig.Unreplayable != "") {
			restored++
		}
	}
	if restored != plainOnly {
		t.Errorf("%d signatures part of another or unreplayable again, want %d", restored, plainOnly)
	}
}

// A bundle copied without its kernels directory opens with a warning and
// imports as a plain trace; a kernels entry that is a file is still an
// error.
func TestBundleWithoutKernels(t *testing.T) {
	src := filepath.Join("testdata", "l1b-compiled_prefill")
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := ReadBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], `kernels directory "kernels" is missing`) {
		t.Errorf("warnings %q", b.Warnings)
	}
	sets, err := b.Sets()
	if err != nil {
		t.Fatal(err)
	}
	if sets[0].Kernels != nil || len(sets[0].Signatures) == 0 {
		t.Errorf("imported %d signatures with kernels %+v; want a plain trace", len(sets[0].Signatures), sets[0].Kernels)
	}
	for _, s := range sets[0].Signatures {
		if s.Binary != nil {
			t.Fatalf("%s has a binary", s.ID)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "kernels"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBundle(dir); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("kernels as a file: %v", err)
	}
}
