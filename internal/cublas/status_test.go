package cublas

import (
	"errors"
	"fmt"
	"testing"
)

func TestStatusNames(t *testing.T) {
	cases := []struct {
		s    Status
		want string
	}{
		{0, "CUBLAS_STATUS_SUCCESS"},
		{1, "CUBLAS_STATUS_NOT_INITIALIZED"},
		{3, "CUBLAS_STATUS_ALLOC_FAILED"},
		{7, "CUBLAS_STATUS_INVALID_VALUE"},
		{8, "CUBLAS_STATUS_ARCH_MISMATCH"},
		{11, "CUBLAS_STATUS_MAPPING_ERROR"},
		{13, "CUBLAS_STATUS_EXECUTION_FAILED"},
		{14, "CUBLAS_STATUS_INTERNAL_ERROR"},
		{15, "CUBLAS_STATUS_NOT_SUPPORTED"},
		{16, "CUBLAS_STATUS_LICENSE_ERROR"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("Status(%d).String() = %q, want %q", int(c.s), got, c.want)
		}
		if c.s.Description() == "" {
			t.Errorf("Status(%d) has no description", int(c.s))
		}
	}
	if libStatus.Load() == nil {
		if got := Status(42).String(); got != "CUBLAS_STATUS_42" {
			t.Errorf("unknown status = %q", got)
		}
	}
}

func TestErrorText(t *testing.T) {
	err := error(&Error{Func: "cublasGemmEx", Status: StatusNotSupported})
	if got, want := err.Error(), "cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("replay op 3: %w", err)
	if s, ok := StatusOf(wrapped); !ok || s != StatusNotSupported {
		t.Fatalf("StatusOf = %v, %v", s, ok)
	}
	if _, ok := StatusOf(errors.New("x")); ok {
		t.Fatal("StatusOf found a status in a plain error")
	}
}

func TestEnumStrings(t *testing.T) {
	checks := []struct{ got, want string }{
		{OpN.String(), "CUBLAS_OP_N"},
		{OpT.String(), "CUBLAS_OP_T"},
		{OpC.String(), "CUBLAS_OP_C"},
		{Operation(9).String(), "cublasOperation_t(9)"},
		{R16F.String(), "CUDA_R_16F"},
		{R16BF.String(), "CUDA_R_16BF"},
		{R32F.String(), "CUDA_R_32F"},
		{R8I.String(), "CUDA_R_8I"},
		{R32I.String(), "CUDA_R_32I"},
		{DataType(99).String(), "cudaDataType_t(99)"},
		{Compute32FFastTF32.String(), "CUBLAS_COMPUTE_32F_FAST_TF32"},
		{ComputeType(1).String(), "cublasComputeType_t(1)"},
		{DefaultMath.String(), "CUBLAS_DEFAULT_MATH"},
		{(TF32TensorOpMath | MathDisallowReducedPrecisionReduction).String(),
			"CUBLAS_TF32_TENSOR_OP_MATH|CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION"},
		{Math(7).String(), "cublasMath_t(7)"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestScaleTypeAndSize(t *testing.T) {
	scale := map[ComputeType]DataType{
		Compute16F: R16F, Compute16FPedantic: R16F,
		Compute32F: R32F, Compute32FFastTF32: R32F, Compute32FFast16BF: R32F, Compute32FFast16F: R32F,
		Compute64F: R64F, Compute32I: R32I,
	}
	for c, want := range scale {
		if got, ok := c.ScaleType(); !ok || got != want {
			t.Errorf("%v.ScaleType() = %v, %v; want %v", c, got, ok, want)
		}
	}
	if _, ok := ComputeType(0).ScaleType(); ok {
		t.Error("ScaleType of an unknown compute type succeeded")
	}
	sizes := map[DataType]int{R16F: 2, R16BF: 2, R32F: 4, R64F: 8, R8I: 1, R32I: 4, C32F: 8, C64F: 16, R4I: 0, R8FE4M3: 1}
	for d, want := range sizes {
		if got := d.Size(); got != want {
			t.Errorf("%v.Size() = %d, want %d", d, got, want)
		}
	}
}
