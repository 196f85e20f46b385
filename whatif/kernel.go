package whatif

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier3"
)

// Kernel is a what-if kernel: its code, its name and its launch shape.
// Its methods that touch the GPU run inside replay.Device.Do (through
// tier3's builders).
type Kernel struct {
	// Name is the kernel's function name (extern "C", unmangled).
	Name string `json:"name"`
	// File is where it was read from, for messages.
	File string `json:"file"`
	// Source is CUDA C++ that NVRTC compiles for the GPU; CUBIN is a
	// module image instead (cubin, fatbin or PTX, as cuModuleLoadData
	// takes it).
	Source string `json:"-"`
	CUBIN  []byte `json:"-"`
	// Grid is the launch's grid (see Dim), Block its block and Shared its
	// dynamic shared memory in bytes.
	Grid   [3]Dim    `json:"grid"`
	Block  [3]uint32 `json:"block"`
	Shared uint32    `json:"shared"`

	mu  sync.Mutex
	fns map[cuda.ContextKey]*cuda.Function // a CUBIN's, loaded per context
}

// Dim is one dimension of a launch's grid: N, or with Rows the rows of
// the ABI divided by N, rounded up (one block per N rows).
type Dim struct {
	Rows bool  `json:"rows,omitempty"`
	N    int64 `json:"n"`
}

// String writes d as ParseGrid reads it: "8", "rows" or "rows/4".
func (d Dim) String() string {
	switch {
	case !d.Rows:
		return strconv.FormatInt(d.N, 10)
	case d.N == 1:
		return "rows"
	}
	return fmt.Sprintf("rows/%d", d.N)
}

// Of is the dimension's size for rows rows.
func (d Dim) Of(rows int64) (uint32, error) {
	n := d.N
	if d.Rows {
		n = (rows + d.N - 1) / d.N
	}
	if n < 1 || n > 1<<31-1 {
		return 0, fmt.Errorf("grid dimension %s is %d for %d rows", d, n, rows)
	}
	return uint32(n), nil
}

// ParseGrid reads a grid: up to three comma-separated dimensions, each a
// count ("8"), "rows" or "rows/N"; missing ones are 1.
func ParseGrid(s string) ([3]Dim, error) {
	g := [3]Dim{{N: 1}, {N: 1}, {N: 1}}
	f := strings.Split(strings.TrimSpace(s), ",")
	if len(f) > 3 {
		return g, fmt.Errorf("grid %q: more than 3 dimensions", s)
	}
	for i, v := range f {
		v = strings.TrimSpace(v)
		d := Dim{N: 1}
		if rest, ok := strings.CutPrefix(v, "rows"); ok {
			d.Rows = true
			v = strings.TrimPrefix(rest, "/")
			if rest == "" {
				v = "1"
			} else if v == rest {
				return g, fmt.Errorf("grid %q: want N, rows or rows/N", s)
			}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1<<31-1 {
			return g, fmt.Errorf("grid %q: want N, rows or rows/N, N from 1 to 2^31-1", s)
		}
		d.N = n
		g[i] = d
	}
	return g, nil
}

// ParseBlock reads a block: up to three comma-separated sizes (missing
// ones are 1), at most 1024 threads in all.
func ParseBlock(s string) ([3]uint32, error) {
	b := [3]uint32{1, 1, 1}
	f := strings.Split(strings.TrimSpace(s), ",")
	if len(f) > 3 {
		return b, fmt.Errorf("block %q: more than 3 dimensions", s)
	}
	total := uint64(1)
	for i, v := range f {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 1 || n > 1024 {
			return b, fmt.Errorf("block %q: want sizes from 1 to 1024", s)
		}
		b[i] = uint32(n)
		total *= n
	}
	if total > 1024 {
		return b, fmt.Errorf("block %q: %d threads, more than 1024", s, total)
	}
	return b, nil
}

// LoadKernel reads a what-if kernel: CUDA C++ source (.cu, .cuh), which
// NVRTC compiles on the GPU machine, or a module image (.cubin, .fatbin,
// .ptx). The kernel name must be in it (an extern "C" function of the
// source; a symbol of the image). Its launch shape is one block per row
// of 256 threads until set.
func LoadKernel(path, name string) (*Kernel, error) {
	if name == "" {
		return nil, fmt.Errorf("%s: no kernel name", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k := &Kernel{Name: name, File: path, Grid: [3]Dim{{Rows: true, N: 1}, {N: 1}, {N: 1}}, Block: [3]uint32{256, 1, 1}}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".cu", ".cuh":
		k.Source = string(b)
		decl := regexp.MustCompile(`extern\s+"C"[^;{]*\b` + regexp.QuoteMeta(name) + `\s*\(`)
		if !decl.MatchString(k.Source) {
			return nil, fmt.Errorf(`%s: no extern "C" kernel %s (a C++ name is mangled, and the ABI looks it up by its name)`, path, name)
		}
	case ".cubin", ".fatbin", ".ptx":
		if len(b) == 0 || !bytes.Contains(b, []byte(name)) {
			return nil, fmt.Errorf("%s: no symbol %s in the image", path, name)
		}
		k.CUBIN = b
	default:
		return nil, fmt.Errorf("%s: want a .cu source or a .cubin, .fatbin or .ptx image, not %q", path, ext)
	}
	return k, nil
}

// LaunchFor is the launch's grid for rn's rows.
func (k *Kernel) LaunchFor(rn *RowNorm) ([3]uint32, error) {
	var g [3]uint32
	for i, d := range k.Grid {
		n, err := d.Of(rn.Rows)
		if err != nil {
			return g, err
		}
		g[i] = n
	}
	return g, nil
}

// function returns the kernel compiled (NVRTC, through tier3's compiler
// and its cache) or loaded in the current context.
func (k *Kernel) function(e *tier3.Env) (*cuda.Function, error) {
	var fn *cuda.Function
	if k.CUBIN == nil {
		var err error
		if fn, err = e.Function(tier3.Source{Name: filepath.Base(k.File), Code: k.Source}, k.Name); err != nil {
			return nil, err
		}
	} else {
		key, err := cuda.CurrentContextKey()
		if err != nil {
			return nil, err
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if fn = k.fns[key]; fn == nil {
			mod, err := cuda.LoadData(k.CUBIN)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.File, err)
			}
			if fn, err = mod.Function(k.Name); err != nil {
				return nil, fmt.Errorf("%s: %w", k.File, err)
			}
			if k.fns == nil {
				k.fns = map[cuda.ContextKey]*cuda.Function{}
			}
			k.fns[key] = fn
		}
	}
	if k.Shared > 48<<10 {
		if err := fn.SetAttribute(cuda.FuncAttrMaxDynamicSharedSizeBytes, int(k.Shared)); err != nil {
			return nil, fmt.Errorf("%s: %d bytes of shared memory: %w", k.Name, k.Shared, err)
		}
	}
	return fn, nil
}

// Builder builds one buffer set of the kernel bound as rn (tier3.Builder):
// x and w random (uniform in [-1, 1)), y, launched as RowNormABI says.
func (k *Kernel) Builder(rn *RowNorm) tier3.Builder {
	return func(e *tier3.Env, _ *signatures.Signature) (*tier3.Instance, error) {
		grid, err := k.LaunchFor(rn)
		if err != nil {
			return nil, err
		}
		fn, err := k.function(e)
		if err != nil {
			return nil, err
		}
		x, err := e.NewTensor(rn.Shape, tier3.ContiguousStrides(rn.Shape), rn.DType)
		if err != nil {
			return nil, err
		}
		w, err := e.NewTensor([]int64{rn.Cols}, []int64{1}, rn.DType)
		if err != nil {
			return nil, err
		}
		y, err := e.Output(rn.Shape, rn.DType)
		if err != nil {
			return nil, err
		}
		rows, cols, eps := int32(rn.Rows), int32(rn.Cols), float32(rn.Eps)
		return &tier3.Instance{
			Inputs: []*tier3.Tensor{x, w}, Outputs: []*tier3.Tensor{y},
			// The square and the sum, x * r, the product with w.
			FLOPs: 4 * x.Numel(),
			Launch: func(s *cuda.Stream) error {
				return fn.Launch(grid, k.Block, k.Shared, s, x.Ptr, w.Ptr, y.Ptr, rows, cols, eps)
			},
		}, nil
	}
}

// profilerTypes are the profiler's names of the ABI's dtypes.
var profilerTypes = map[string]string{"f16": "c10::Half", "bf16": "c10::BFloat16", "f32": "float"}

// Signature is the kernel's signature for a variant bound as rn with runs
// runs: tier 3, class norm, op "whatif::NAME", the kernel's name and
// launch, inputs x and w; its ID a hash of the kernel's code, launch and
// binding.
func (k *Kernel) Signature(rn *RowNorm, runs int) (*signatures.Signature, error) {
	grid, err := k.LaunchFor(rn)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%x\x00%v %v %d\x00%+v", k.Name, k.Source, k.CUBIN, grid, k.Block, k.Shared, *rn)
	pt := profilerTypes[rn.DType]
	return &signatures.Signature{
		ID:       hex.EncodeToString(h.Sum(nil))[:12],
		Label:    fmt.Sprintf("whatif %s %s%v", k.Name, rn.DType, rn.Shape),
		Tier:     signatures.TierKernel,
		Class:    signatures.ClassNorm,
		Activity: signatures.ActivityKernel,
		Count:    runs,
		Kernel:   k.Name,
		Op:       "whatif::" + k.Name,
		Inputs: []signatures.Input{
			{Type: pt, Shape: rn.Shape, Strides: tier3.ContiguousStrides(rn.Shape)},
			{Type: pt, Shape: []int64{rn.Cols}, Strides: []int64{1}},
		},
		Launch: &signatures.Launch{Grid: [3]int64{int64(grid[0]), int64(grid[1]), int64(grid[2])},
			Block: [3]int64{int64(k.Block[0]), int64(k.Block[1]), int64(k.Block[2])}, SharedMem: int64(k.Shared)},
	}, nil
}
