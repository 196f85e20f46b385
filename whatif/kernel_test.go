package whatif

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/nvrtc"
	"github.com/kreplay/kreplay/signatures"
)

func TestParseGrid(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the dimensions' String, or the error
		of   [3]uint32
	}{
		{"rows", "rows 1 1", [3]uint32{2048, 1, 1}},
		{"rows/4", "rows/4 1 1", [3]uint32{512, 1, 1}},
		{"rows/3,2", "rows/3 2 1", [3]uint32{683, 2, 1}},
		{" 132 , 1, 1 ", "132 1 1", [3]uint32{132, 1, 1}},
		{"", "want N, rows or rows/N", [3]uint32{}},
		{"rows4", "want N, rows or rows/N", [3]uint32{}},
		{"rows/0", "N from 1", [3]uint32{}},
		{"-1", "N from 1", [3]uint32{}},
		{"1,1,1,1", "more than 3", [3]uint32{}},
	} {
		g, err := ParseGrid(c.in)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("ParseGrid(%q): %v, want %q", c.in, err, c.want)
			}
			continue
		}
		if s := g[0].String() + " " + g[1].String() + " " + g[2].String(); s != c.want {
			t.Errorf("ParseGrid(%q) = %s, want %s", c.in, s, c.want)
		}
		k := &Kernel{Grid: g}
		if of, err := k.LaunchFor(&RowNorm{Rows: 2048}); err != nil || of != c.of {
			t.Errorf("ParseGrid(%q) for 2048 rows: %v, %v; want %v", c.in, of, err, c.of)
		}
	}
	if _, err := (Dim{N: 1 << 31}).Of(1); err == nil {
		t.Error("a grid dimension of 2^31 passed")
	}
}

func TestParseBlock(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [3]uint32
		err  string
	}{
		{"256", [3]uint32{256, 1, 1}, ""},
		{"32,4", [3]uint32{32, 4, 1}, ""},
		{"1024,1,1", [3]uint32{1024, 1, 1}, ""},
		{"64,32", [3]uint32{}, "2048 threads"},
		{"0", [3]uint32{}, "from 1 to 1024"},
		{"2048", [3]uint32{}, "from 1 to 1024"},
		{"x", [3]uint32{}, "from 1 to 1024"},
		{"1,1,1,1", [3]uint32{}, "more than 3"},
	} {
		b, err := ParseBlock(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseBlock(%q): %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || b != c.want {
			t.Errorf("ParseBlock(%q) = %v, %v; want %v", c.in, b, err, c.want)
		}
	}
}

func TestLoadKernel(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cxx := write("cxx.cu", "__global__ void k(const unsigned short *x) {}\n")
	img := write("k.cubin", "\x7fELF....k_fused....")
	for _, c := range []struct {
		path, name, err string
	}{
		{exampleKernel, "rmsnorm_fused", ""},
		{exampleKernel, "rmsnorm_fused_bf16", ""},
		{exampleKernel, "rmsnorm", `no extern "C" kernel rmsnorm`},
		{exampleKernel, "", "no kernel name"},
		{cxx, "k", `no extern "C" kernel k`},
		{img, "k_fused", ""},
		{img, "other", "no symbol other"},
		{write("k.o", "x"), "k", "want a .cu source"},
		{filepath.Join(dir, "missing.cu"), "k", "no such file"},
	} {
		k, err := LoadKernel(c.path, c.name)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("LoadKernel(%s, %s): %v, want %q", filepath.Base(c.path), c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("LoadKernel(%s, %s): %v", filepath.Base(c.path), c.name, err)
			continue
		}
		if (k.Source == "") == (k.CUBIN == nil) || k.Grid[0] != (Dim{Rows: true, N: 1}) || k.Block != [3]uint32{256, 1, 1} {
			t.Errorf("LoadKernel(%s, %s) = %+v", filepath.Base(c.path), c.name, k)
		}
	}
}

// The fused kernel's signature is a tier-3 norm named by the kernel, with
// the ABI's inputs; its ID follows the code, launch and binding.
func TestKernelSignature(t *testing.T) {
	k, err := LoadKernel(exampleKernel, "rmsnorm_fused")
	if err != nil {
		t.Fatal(err)
	}
	rn := &RowNorm{Recipe: "llama-rmsnorm", DType: "f16", Shape: []int64{4, 512, 4096}, Rows: 2048, Cols: 4096, Eps: 1e-6}
	sig, err := k.Signature(rn, 65)
	if err != nil {
		t.Fatal(err)
	}
	if !isSigID(sig.ID) || sig.Tier != signatures.TierKernel || sig.Class != signatures.ClassNorm || sig.Kernel != "rmsnorm_fused" ||
		sig.Op != "whatif::rmsnorm_fused" || sig.Count != 65 || sig.Launch.Grid != [3]int64{2048, 1, 1} || sig.Launch.Block != [3]int64{256, 1, 1} ||
		signatures.DType(sig.Inputs[0].Type) != "f16" || sig.Inputs[1].Numel() != 4096 || sig.Label != "whatif rmsnorm_fused f16[4 512 4096]" {
		t.Errorf("signature %+v", sig)
	}
	again, _ := k.Signature(rn, 65)
	k.Block[0] = 512
	other, _ := k.Signature(rn, 65)
	if again.ID != sig.ID || other.ID == sig.ID {
		t.Errorf("IDs %s, %s again, %s with another block", sig.ID, again.ID, other.ID)
	}
}

// The examples compile with NVRTC for an H100 (sm_90), where NVRTC is
// installed; skipped elsewhere (fails under KREPLAY_REQUIRE_GPU=1).
func TestExampleKernelCompiles(t *testing.T) {
	gputest.Require(t, nvrtc.Init)
	for _, c := range []struct{ path, name string }{{exampleKernel, "rmsnorm_fused"}, {exampleKernel, "rmsnorm_fused_bf16"}} {
		k, err := LoadKernel(c.path, c.name)
		if err != nil {
			t.Fatal(err)
		}
		// The options tier3's compiler gives every source.
		res, err := nvrtc.Compile(k.Source, c.name+".cu", []string{"--gpu-architecture=sm_90", "--std=c++17", "-default-device"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(res.CUBIN) == 0 || !strings.Contains(string(res.CUBIN), c.name) {
			t.Errorf("%s: %d bytes of CUBIN without the kernel", c.name, len(res.CUBIN))
		}
	}
}
