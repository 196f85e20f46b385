package whatif

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// exampleKernel is the worked example's kernel source: rmsnorm_fused for
// an f16 model, rmsnorm_fused_bf16 for a bf16 one.
var exampleKernel = filepath.Join("..", "examples", "whatif", "rmsnorm", "rmsnorm_fused.cu")

// The PTX conversions of the example, replaced by the host shim's for a
// host build (as tier3's host tests do).
var (
	hostH2F = regexp.MustCompile(`asm\("cvt\.f32\.f16 %0, %1;" : "=f"\(f\) : "h"\(h\)\);`)
	hostF2H = regexp.MustCompile(`asm\("cvt\.rn\.f16\.f32 %0, %1;" : "=h"\(h\) : "f"\(f\)\);`)
)

func hostCXX() string {
	if c := os.Getenv("CXX"); c != "" {
		return c
	}
	return "g++"
}

// buildHost compiles an example kernel (its file and function) for the
// host with tier3's CUDA shim and the driver in testdata (cached by content
// under the user's cache directory), or skips without a C++ compiler.
func buildHost(t *testing.T, file, name string) string {
	t.Helper()
	if _, err := exec.LookPath(hostCXX()); err != nil {
		t.Skipf("no C++ compiler (%s): %v", hostCXX(), err)
	}
	var parts [][]byte
	for _, p := range []string{filepath.Join("..", "tier3", "testdata", "rd_host.h"), file, filepath.Join("testdata", "rmsnorm_host_main.cc")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	kernel := hostH2F.ReplaceAll(parts[1], []byte("f = emu_h2f(h);"))
	kernel = hostF2H.ReplaceAll(kernel, []byte("h = emu_f2h(f);"))
	if bytes.Contains(kernel, []byte("asm(")) {
		t.Fatal("the example has inline PTX the host build does not replace")
	}
	src := bytes.Join([][]byte{parts[0], kernel, []byte("#define KERNEL " + name), parts[2]}, []byte("\n"))
	h := sha256.Sum256(append(src, hostCXX()...))
	dir := filepath.Join(t.TempDir())
	if base, err := os.UserCacheDir(); err == nil && os.MkdirAll(filepath.Join(base, "kreplay", "whatifhost"), 0o755) == nil {
		dir = filepath.Join(base, "kreplay", "whatifhost")
	}
	bin := filepath.Join(dir, hex.EncodeToString(h[:12]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cc := bin + fmt.Sprintf(".%d.cc", os.Getpid())
	if err := os.WriteFile(cc, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(cc)
	tmp := bin + fmt.Sprintf(".%d.tmp", os.Getpid())
	if out, err := exec.Command(hostCXX(), "-std=c++20", "-O1", "-w", "-o", tmp, cc).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", hostCXX(), err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// randomHalf returns n values uniform in [-1, 1) as dtype's (f16 or
// bf16) storage.
func randomHalf(t *testing.T, r *rand.Rand, n int, dtype string) []byte {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	b, err := encode(v, dtype)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The example kernels (f16, and bf16 for a bf16 model), run on the host
// one block at a time, compute what the chain computes (Reference) within
// one rounding of their dtype: on the vector path (rows of a multiple of
// 8, aligned buffers), on the scalar path (misaligned buffers, rows of odd
// length), and with more blocks than rows.
func TestExampleKernelOnHost(t *testing.T) {
	for _, k := range []struct{ file, name, dtype string }{
		{exampleKernel, "rmsnorm_fused", "f16"},
		{exampleKernel, "rmsnorm_fused_bf16", "bf16"},
	} {
		t.Run(k.dtype, func(t *testing.T) { checkExampleOnHost(t, buildHost(t, k.file, k.name), k.dtype) })
	}
}

// checkExampleOnHost runs a host build of an example kernel on random
// rows of dtype against Reference.
func checkExampleOnHost(t *testing.T, bin, dtype string) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name               string
		rows, cols         int
		grid, block, misal int
		eps                float32
	}{
		{"llama rows, vectors", 3, 4096, 3, 256, 0, 1e-6},
		{"misaligned, scalar", 2, 4096, 2, 256, 1, 1e-6},
		{"odd rows, 1024 threads", 2, 1001, 2, 1024, 0, 1e-5},
		{"more blocks than rows, one warp", 2, 64, 4, 32, 0, 1e-6},
	} {
		x, w := randomHalf(t, r, c.rows*c.cols, dtype), randomHalf(t, r, c.cols, dtype)
		var in bytes.Buffer
		for _, v := range []any{uint32(c.rows), uint32(c.cols), uint32(c.grid), uint32(c.block), uint32(c.misal), c.eps} {
			binary.Write(&in, binary.LittleEndian, v)
		}
		in.Write(x)
		in.Write(w)
		cmd := exec.Command(bin)
		cmd.Stdin = &in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", c.name, err, stderr.String())
		}
		got, err := decode(out, dtype)
		if err != nil {
			t.Fatal(err)
		}
		rn := &RowNorm{DType: dtype, Rows: int64(c.rows), Cols: int64(c.cols), Eps: float64(c.eps)}
		want, err := Reference(rn, true, x, w)
		if err != nil {
			t.Fatal(err)
		}
		// One rounding step of the largest output (f16 about 2^-11
		// relative, bf16 2^-8) may differ where rsqrt's last bit does.
		tol := 2e-3
		if dtype == "bf16" {
			tol = 1e-2
		}
		a := Compare(got, want, tol)
		if !a.OK() {
			t.Errorf("%s: %v", c.name, a)
		} else {
			t.Logf("%s: %v", c.name, a)
		}
	}
}
