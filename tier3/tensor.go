package tier3

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/signatures"
)

//go:embed kernels/util.cu
var utilSource string

// Util is the helper source every kernel source may prepend.
var Util = Source{Name: "util.cu", Code: utilSource}

// Tensor is a device tensor with the traced layout.
type Tensor struct {
	Ptr     gpu.DevicePtr
	Shape   []int64
	Strides []int64 // in elements, as PyTorch reports them
	DType   string  // kreplay's short dtype ("f16", "i64", ...)
	// Span is the number of elements of storage the strided view spans.
	Span int64
}

// Numel is the number of elements of the view.
func (t *Tensor) Numel() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// ElemSize is the size of one element in bytes.
func (t *Tensor) ElemSize() int64 { return max(signatures.DTypeSize(t.DType), 1) }

// Bytes is the storage the view spans, in bytes.
func (t *Tensor) Bytes() int64 { return t.Span * t.ElemSize() }

// Contiguous reports whether the strides are row-major contiguous.
func (t *Tensor) Contiguous() bool {
	want := int64(1)
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if t.Shape[i] != 1 && t.Strides[i] != want {
			return false
		}
		want *= t.Shape[i]
	}
	return true
}

// span returns the storage elements a strided view spans.
func span(shape, strides []int64) int64 {
	s := int64(1)
	for i, d := range shape {
		if d == 0 {
			return 0
		}
		if i < len(strides) {
			s += (d - 1) * strides[i]
		}
	}
	return s
}

// ContiguousStrides returns row-major strides for shape
// (signatures.RowMajor).
func ContiguousStrides(shape []int64) []int64 { return signatures.RowMajor(shape) }

// Env is what a Builder allocates and compiles with. Its methods run with
// the device's context current.
type Env struct {
	Compiler *Compiler
	Stream   *gpu.Stream
	SMs      int
	cfg      Config // how to replay where a choice is a guess
	seed     uint64
	budget   int64 // device bytes still allowed (0: no limit)
	allocs   []cuda.DevicePtr
}

func (e *Env) alloc(bytes int64) (cuda.DevicePtr, error) {
	bytes = max(bytes, 16)
	bytes = (bytes + 15) &^ 15
	if e.budget > 0 {
		if bytes > e.budget {
			return 0, fmt.Errorf("needs %d more bytes of device memory, %d available", bytes, e.budget)
		}
		e.budget -= bytes
	}
	p, err := cuda.MemAlloc(int(bytes))
	if err != nil {
		return 0, err
	}
	e.allocs = append(e.allocs, p)
	return p, nil
}

func (e *Env) free() error {
	var errs []error
	for _, p := range e.allocs {
		errs = append(errs, p.Free())
	}
	e.allocs = nil
	return errors.Join(errs...)
}

// Input allocates a traced tensor input with its shape, strides and dtype,
// filled with random values (uniform in [-1, 1) for floating types).
func (e *Env) Input(in signatures.Input) (*Tensor, error) {
	if !in.IsTensor() {
		return nil, fmt.Errorf("input of type %q is not a tensor", in.Type)
	}
	st := in.Strides
	if len(st) != len(in.Shape) {
		st = ContiguousStrides(in.Shape)
	}
	return e.NewTensor(in.Shape, st, signatures.DType(in.Type))
}

// NewTensor allocates a tensor with the given layout and random contents.
func (e *Env) NewTensor(shape, strides []int64, dtype string) (*Tensor, error) {
	t := &Tensor{Shape: shape, Strides: strides, DType: dtype, Span: span(shape, strides)}
	if signatures.DTypeSize(dtype) == 0 {
		return nil, fmt.Errorf("dtype %q is not replayed", dtype)
	}
	p, err := e.alloc(t.Bytes())
	if err != nil {
		return nil, err
	}
	t.Ptr = p
	e.seed++
	if err := launch.FillRandom(p, t.Bytes(), dtype, e.seed, e.Stream); err != nil {
		return nil, err
	}
	return t, nil
}

// Output allocates a contiguous tensor for a result. Its contents are
// random, so a kernel that fails to write it is seen by the tests.
func (e *Env) Output(shape []int64, dtype string) (*Tensor, error) {
	return e.NewTensor(shape, ContiguousStrides(shape), dtype)
}

// Index allocates an integer tensor input (int64 or int32, as traced) with
// random values in [0, limit), so gathers stay in bounds.
func (e *Env) Index(in signatures.Input, limit int64) (*Tensor, error) {
	t, err := e.Input(in)
	if err != nil {
		return nil, err
	}
	wide := int32(1)
	switch t.DType {
	case "i64":
	case "i32":
		wide = 0
	default:
		return nil, fmt.Errorf("index tensor of dtype %s", t.DType)
	}
	f, err := e.Function(Util, "kr_fill_index")
	if err != nil {
		return nil, err
	}
	e.seed++
	grid := uint32(min((t.Span+255)/256, 4096))
	if err := f.Launch([3]uint32{max(grid, 1), 1, 1}, [3]uint32{256, 1, 1}, 0, e.Stream,
		t.Ptr, uint64(t.Span), e.seed, limit, wide); err != nil {
		return nil, err
	}
	return t, e.Stream.Synchronize()
}

// Function compiles (once) and loads a kernel.
func (e *Env) Function(src Source, name string) (*gpu.Function, error) {
	return e.Compiler.Function(src, name)
}
