package cublas

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// Loading itself is package dl's; this checks what the package gives it.
func TestSymbols(t *testing.T) { dltest.CheckLibrary(t, &lib, "cublasCreate_v2") }

func TestLoadReportsCandidates(t *testing.T) {
	err := dltest.LoadFailure(t, Load, ErrNotFound, func() string {
		p := Path()
		found := false
		for _, c := range Candidates {
			found = found || c == p
		}
		if !found {
			t.Fatalf("Path() = %q, not a candidate", p)
		}
		return fmt.Sprintf("libcublas is installed (%s); the failure text cannot be checked here", p)
	})
	for _, c := range Candidates {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("Load error %q does not name %s", err, c)
		}
	}
	if _, cerr := Create(); !errors.Is(cerr, ErrNotFound) {
		t.Errorf("Create without a library: %v", cerr)
	}
}

func TestNilHandle(t *testing.T) {
	var h *Handle
	if err := h.Destroy(); err != nil {
		t.Errorf("Destroy on nil: %v", err)
	}
	one := []byte{0, 0, 0x80, 0x3f}
	p := unsafe.Pointer(&one[0])
	errs := []error{
		h.SetStream(nil),
		h.SetWorkspace(0, 0),
		h.SetMathMode(DefaultMath),
		h.GemmEx(OpN, OpN, 1, 1, 1, p, 0, R32F, 1, 0, R32F, 1, p, 0, R32F, 1, Compute32F, GemmDefault),
		h.GemmStridedBatchedEx(OpN, OpN, 1, 1, 1, p, 0, R32F, 1, 1, 0, R32F, 1, 1, p, 0, R32F, 1, 1, 1, Compute32F, GemmDefault),
	}
	if _, err := h.GetMathMode(); true {
		errs = append(errs, err)
	}
	if _, err := h.GetVersion(); true {
		errs = append(errs, err)
	}
	for i, err := range errs {
		if !errors.Is(err, ErrNilHandle) {
			t.Errorf("call %d: %v, want ErrNilHandle", i, err)
		}
	}
	if !strings.HasPrefix(errs[3].Error(), "cublasGemmEx: ") {
		t.Errorf("GemmEx error %q does not name the call", errs[3])
	}
}

func TestArgumentChecks(t *testing.T) {
	if err := intArgs("cublasGemmEx", "m", 1<<40); err == nil || !strings.Contains(err.Error(), "cublasGemmEx") {
		t.Errorf("oversized m: %v", err)
	}
	if err := intArgs("f", "m, n", 3, -4); err != nil {
		t.Errorf("small values rejected: %v", err)
	}
}
