package replay

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// TestGPUCapturedReplay runs a small transformer-like step in PyTorch
// twice in one process, first under the kernel recorder, which then lets
// go of CUPTI, then under the profiler, imports the
// trace with the recorded launches and replays every signature by its
// captured binary: cuBLAS and cuBLASLt GEMMs (FP8 among them), cuDNN's
// fused attention, a Triton kernel and PyTorch's own kernels all go
// through the one path. Every kernel of the trace must match a recorded
// launch, every signature must replay without error, and CUPTI must see
// the very kernel the trace names.
func TestGPUCapturedReplay(t *testing.T) {
	gputest.Require(t, func() error {
		return exec.Command("python3", "-c", "import torch; assert torch.cuda.is_available()").Run()
	})
	dir := t.TempDir()
	lib, err := inject.Build(filepath.Join(dir, "lib"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("testdata", "capture_workload.py")
	trace := filepath.Join(dir, "step.trace.json.gz")
	raw := filepath.Join(dir, "raw")
	if err := os.Mkdir(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	python(t, inject.Env(lib, raw, 0), script, "record-profile", trace)
	capt, err := inject.ReadDir(raw)
	if err != nil {
		t.Fatal(err)
	}
	kdir := filepath.Join(dir, "kernels")
	x, err := inject.Pack(capt, kdir)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("KREPLAY_TEST_KEEP"); keep != "" {
		// Keep the trace and the index for CPU tests and records.
		for _, f := range []string{trace, filepath.Join(kdir, "index.json")} {
			if b, err := os.ReadFile(f); err == nil {
				os.WriteFile(filepath.Join(keep, filepath.Base(f)), b, 0o644)
			}
		}
	}
	for _, n := range x.Notes {
		t.Logf("note: %s", n)
	}
	groupedLaunches(t, x)
	set, err := signatures.ImportFile(trace, signatures.Options{Kernels: x, KernelsFS: os.DirFS(kdir)})
	if err != nil {
		t.Fatal(err)
	}
	m := set.Kernels
	t.Logf("trace kernels %d, recorded launches %d, matched %d, signatures with a binary %d", m.Traced, m.Recorded, m.Matched, m.Signatures)
	if m.Matched != m.Traced {
		t.Errorf("%d of %d traced kernels matched a recorded launch", m.Matched, m.Traced)
	}
	d := openGPU(t)
	entries := d.RunSet(set, SuiteOptions{Cache: Rotating, Measure: Options{Budget: 200 * time.Millisecond}})
	var traced, same float64
	for _, e := range entries {
		sig := set.ByID(e.ID)
		if sig.Activity != signatures.ActivityKernel {
			continue
		}
		traced += float64(e.TracedTotalNS)
		line := fmt.Sprintf("%-60.60s traced %8.1f µs", e.Label, float64(e.TracedMedianNS)/1e3)
		switch {
		case e.Err != "":
			t.Errorf("%s: %s", e.Label, e.Err)
		case e.Result.Path != PathCaptured:
			t.Errorf("%s: replayed by %s, not its captured binary", e.Label, e.Result.Path)
		default:
			r := e.ReplayNS()
			line += fmt.Sprintf(" replay %8.1f µs x%.2f same=%v", r/1e3, r/float64(e.TracedMedianNS), e.SameKernel != nil && *e.SameKernel)
			if e.SameKernel != nil && *e.SameKernel {
				same += float64(e.TracedTotalNS)
			} else {
				t.Errorf("%s: CUPTI saw %v, the trace %s", e.Label, ranNames(e.Result), e.Kernel)
			}
		}
		t.Log(line)
	}
	t.Logf("traced kernel time replayed by the same kernel: %.1f%%", 100*same/traced)
	droppedProducer(t, d, set)
}

// groupedLaunches checks that a grouped GEMM's launch (torch._grouped_mm,
// on Hopper) was recorded with the pointers to its operands that it reads
// from device memory, which its replay re-points.
func groupedLaunches(t *testing.T, x *inject.Index) {
	t.Helper()
	for _, l := range x.Launches {
		if !strings.Contains(l.Name, "GroupProblemShape") {
			continue
		}
		t.Logf("grouped GEMM %.60s: %d inner pointers", l.Name, len(l.Inner))
		if len(l.Inner) == 0 {
			t.Errorf("grouped GEMM %.80s recorded without inner pointers", l.Name)
		}
	}
}

// droppedProducer checks that a context launch that cannot be made
// launchable (here: no module) costs the signature its context, not its
// replay: it prepares, primed by the others, and says so.
func droppedProducer(t *testing.T, d *Device, set *signatures.Set) {
	t.Helper()
	for _, sig := range set.Signatures {
		b := sig.Binary
		if b == nil || len(b.Context) == 0 || ComputeBound(sig) {
			continue
		}
		broken := *b.Context[0].Launch
		broken.Module, broken.Alternatives = "", nil
		first := *b.Context[0]
		first.Launch = &broken
		b2 := *b
		b2.Context = append([]*inject.Producer{&first}, b.Context[1:]...)
		s2 := *sig
		s2.Binary = &b2
		p, err := d.PrepareFor(&s2, Context)
		if err != nil {
			t.Errorf("%s with a context launch that has no module: %v", sig.Label, err)
			return
		}
		defer p.Close()
		want := fmt.Sprintf("primed without 1 of its %d producers", len(b.Context))
		if !strings.Contains(p.Note, want) {
			t.Errorf("%s with a context launch that has no module: note %q, want %q", sig.Label, p.Note, want)
		}
		return
	}
	t.Error("no signature with a context to check a dropped producer on")
}

func python(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("python3", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func ranNames(r *Result) []string {
	var out []string
	for _, x := range r.Ran {
		out = append(out, x.Name)
	}
	return out
}
