// Package tier2 replays work that a vendor library does when called
// directly: GEMMs through cuBLAS and cuBLASLt, called the way PyTorch 2.11
// calls them (docs/pytorch-gemm.md), so that the library picks the kernel
// the trace names.
package tier2

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/cublaslt"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cudnn"
)

// DefaultWorkspace is the cuBLAS workspace PyTorch sets on Hopper (32 MiB),
// and the cuBLASLt workspace of PyTorch 2.11 builds.
const DefaultWorkspace = 32 << 20

// LibOptions configure the library handles.
type LibOptions struct {
	// Workspace is the cuBLAS handle's workspace in bytes (default 32 MiB;
	// the environment variable KREPLAY_CUBLAS_WORKSPACE overrides it).
	Workspace int
	// LtWorkspace is the cuBLASLt matmul workspace limit in bytes (default
	// 32 MiB; KREPLAY_CUBLASLT_WORKSPACE overrides it).
	LtWorkspace int
}

// Libraries holds the library handles and workspaces that a device's
// tier-2 kernels share. Use it from the goroutine holding the context.
type Libraries struct {
	blas        *cublas.Handle
	lt          *cublaslt.Handle
	ws, ltWS    cuda.DevicePtr
	wsN, ltWSN  int
	stream      *cuda.Stream
	BlasVersion int
	// dnn is the cuDNN handle, created on first use (cuDNN); dnnOn is the
	// stream it was last set to.
	dnn    *cudnn.Handle
	dnnErr error
	dnnOn  *cuda.Stream
}

// cuDNN returns the cuDNN handle, created on the first call (loading
// cuDNN then, so that a machine without it replays everything else) and
// bound to the libraries' stream.
func (l *Libraries) cuDNN() (*cudnn.Handle, error) {
	if l.dnn == nil && l.dnnErr == nil {
		l.dnn, l.dnnErr = cudnn.Create()
		if l.dnnErr == nil {
			l.dnnErr = l.dnnStream(l.stream)
		}
	}
	return l.dnn, l.dnnErr
}

// dnnStream binds the cuDNN handle to s where it is bound to another.
func (l *Libraries) dnnStream(s *cuda.Stream) error {
	if l.dnn == nil || l.dnnOn == s {
		return nil
	}
	var h unsafe.Pointer
	if s != nil {
		h = s.Handle()
	}
	if err := l.dnn.SetStream(h); err != nil {
		return err
	}
	l.dnnOn = s
	return nil
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a byte count", name, v)
	}
	return n, nil
}

// Open loads cuBLAS and cuBLASLt, creates handles bound to s and sets the
// handle state PyTorch sets: the workspace and CUBLAS_DEFAULT_MATH (TF32
// off, reduced-precision reductions allowed).
func Open(s *gpu.Stream, opt LibOptions) (l *Libraries, err error) {
	if opt.Workspace == 0 {
		if opt.Workspace, err = envInt("KREPLAY_CUBLAS_WORKSPACE", DefaultWorkspace); err != nil {
			return nil, err
		}
	}
	if opt.LtWorkspace == 0 {
		if opt.LtWorkspace, err = envInt("KREPLAY_CUBLASLT_WORKSPACE", DefaultWorkspace); err != nil {
			return nil, err
		}
	}
	l = &Libraries{stream: s, wsN: opt.Workspace, ltWSN: opt.LtWorkspace}
	opened := l
	defer func() {
		if err != nil {
			opened.Close()
		}
	}()
	if l.blas, err = cublas.Create(); err != nil {
		return nil, err
	}
	if l.BlasVersion, err = l.blas.GetVersion(); err != nil {
		return nil, err
	}
	if err = l.blas.SetStream(s.Handle()); err != nil {
		return nil, err
	}
	if l.ws, err = cuda.MemAlloc(max(l.wsN, 256)); err != nil {
		return nil, err
	}
	if err = l.blas.SetWorkspace(uintptr(l.ws), uint64(l.wsN)); err != nil {
		return nil, err
	}
	if err = l.blas.SetMathMode(cublas.DefaultMath); err != nil {
		return nil, err
	}
	if l.lt, err = cublaslt.Create(); err != nil {
		return nil, err
	}
	if l.ltWS, err = cuda.MemAlloc(max(l.ltWSN, 256)); err != nil {
		return nil, err
	}
	return l, nil
}

// Close destroys the handles and frees the workspaces.
func (l *Libraries) Close() error {
	var errs []error
	if l.blas != nil {
		errs = append(errs, l.blas.Destroy())
	}
	if l.lt != nil {
		errs = append(errs, l.lt.Destroy())
	}
	if l.dnn != nil {
		errs = append(errs, l.dnn.Destroy())
	}
	for _, p := range []cuda.DevicePtr{l.ws, l.ltWS} {
		if p != 0 {
			errs = append(errs, p.Free())
		}
	}
	*l = Libraries{}
	return errors.Join(errs...)
}
