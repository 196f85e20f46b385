package cublas

import "fmt"

// Operation is a cublasOperation_t (whether an operand is transposed).
type Operation int32

// cublasOperation_t values (cublas_api.h, CUDA 12.6 and 13.0).
const (
	OpN Operation = 0 // CUBLAS_OP_N: no transpose
	OpT Operation = 1 // CUBLAS_OP_T: transpose
	OpC Operation = 2 // CUBLAS_OP_C: conjugate transpose (CUBLAS_OP_HERMITAN)
)

// String returns the enumerator name.
func (o Operation) String() string {
	switch o {
	case OpN:
		return "CUBLAS_OP_N"
	case OpT:
		return "CUBLAS_OP_T"
	case OpC:
		return "CUBLAS_OP_C"
	}
	return fmt.Sprintf("cublasOperation_t(%d)", int32(o))
}

// DataType is a cudaDataType_t (library_types.h), the element type of a
// matrix or scalar.
type DataType int32

// cudaDataType_t values from library_types.h, verified against the
// CUDA 12.6 and 13.0 header text. The FP8/FP6/FP4 entries marked 13.0
// exist only in CUDA 13 headers.
const (
	R16F     DataType = 2  // CUDA_R_16F: IEEE half
	C16F     DataType = 6  // CUDA_C_16F
	R16BF    DataType = 14 // CUDA_R_16BF: bfloat16
	C16BF    DataType = 15 // CUDA_C_16BF
	R32F     DataType = 0  // CUDA_R_32F: float
	C32F     DataType = 4  // CUDA_C_32F
	R64F     DataType = 1  // CUDA_R_64F: double
	C64F     DataType = 5  // CUDA_C_64F
	R4I      DataType = 16 // CUDA_R_4I
	C4I      DataType = 17 // CUDA_C_4I
	R4U      DataType = 18 // CUDA_R_4U
	C4U      DataType = 19 // CUDA_C_4U
	R8I      DataType = 3  // CUDA_R_8I
	C8I      DataType = 7  // CUDA_C_8I
	R8U      DataType = 8  // CUDA_R_8U
	C8U      DataType = 9  // CUDA_C_8U
	R16I     DataType = 20 // CUDA_R_16I
	C16I     DataType = 21 // CUDA_C_16I
	R16U     DataType = 22 // CUDA_R_16U
	C16U     DataType = 23 // CUDA_C_16U
	R32I     DataType = 10 // CUDA_R_32I
	C32I     DataType = 11 // CUDA_C_32I
	R32U     DataType = 12 // CUDA_R_32U
	C32U     DataType = 13 // CUDA_C_32U
	R64I     DataType = 24 // CUDA_R_64I
	C64I     DataType = 25 // CUDA_C_64I
	R64U     DataType = 26 // CUDA_R_64U
	C64U     DataType = 27 // CUDA_C_64U
	R8FE4M3  DataType = 28 // CUDA_R_8F_E4M3 (also CUDA_R_8F_UE4M3 in 13.0)
	R8FE5M2  DataType = 29 // CUDA_R_8F_E5M2
	R8FUE8M0 DataType = 30 // CUDA_R_8F_UE8M0 (13.0)
	R6FE2M3  DataType = 31 // CUDA_R_6F_E2M3 (13.0)
	R6FE3M2  DataType = 32 // CUDA_R_6F_E3M2 (13.0)
	R4FE2M1  DataType = 33 // CUDA_R_4F_E2M1 (13.0)
)

var dataTypeNames = map[DataType]string{
	R16F: "CUDA_R_16F", C16F: "CUDA_C_16F", R16BF: "CUDA_R_16BF", C16BF: "CUDA_C_16BF",
	R32F: "CUDA_R_32F", C32F: "CUDA_C_32F", R64F: "CUDA_R_64F", C64F: "CUDA_C_64F",
	R4I: "CUDA_R_4I", C4I: "CUDA_C_4I", R4U: "CUDA_R_4U", C4U: "CUDA_C_4U",
	R8I: "CUDA_R_8I", C8I: "CUDA_C_8I", R8U: "CUDA_R_8U", C8U: "CUDA_C_8U",
	R16I: "CUDA_R_16I", C16I: "CUDA_C_16I", R16U: "CUDA_R_16U", C16U: "CUDA_C_16U",
	R32I: "CUDA_R_32I", C32I: "CUDA_C_32I", R32U: "CUDA_R_32U", C32U: "CUDA_C_32U",
	R64I: "CUDA_R_64I", C64I: "CUDA_C_64I", R64U: "CUDA_R_64U", C64U: "CUDA_C_64U",
	R8FE4M3: "CUDA_R_8F_E4M3", R8FE5M2: "CUDA_R_8F_E5M2", R8FUE8M0: "CUDA_R_8F_UE8M0",
	R6FE2M3: "CUDA_R_6F_E2M3", R6FE3M2: "CUDA_R_6F_E3M2", R4FE2M1: "CUDA_R_4F_E2M1",
}

// String returns the enumerator name, e.g. "CUDA_R_16F".
func (t DataType) String() string {
	if n, ok := dataTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("cudaDataType_t(%d)", int32(t))
}

// Size returns the size in bytes of one element, or 0 for sub-byte and
// unknown types.
func (t DataType) Size() int {
	switch t {
	case R8I, R8U, R8FE4M3, R8FE5M2, R8FUE8M0:
		return 1
	case R16F, R16BF, R16I, R16U, C8I, C8U:
		return 2
	case R32F, R32I, R32U, C16F, C16BF, C16I, C16U:
		return 4
	case R64F, R64I, R64U, C32F, C32I, C32U:
		return 8
	case C64F, C64I, C64U:
		return 16
	}
	return 0
}

// ComputeType is a cublasComputeType_t.
type ComputeType int32

// cublasComputeType_t values (cublas_api.h, CUDA 12.6 and 13.0; the
// entry marked 13.0 exists only there).
const (
	Compute16F               ComputeType = 64 // CUBLAS_COMPUTE_16F
	Compute16FPedantic       ComputeType = 65 // CUBLAS_COMPUTE_16F_PEDANTIC
	Compute32F               ComputeType = 68 // CUBLAS_COMPUTE_32F
	Compute32FPedantic       ComputeType = 69 // CUBLAS_COMPUTE_32F_PEDANTIC
	Compute32FFast16F        ComputeType = 74 // CUBLAS_COMPUTE_32F_FAST_16F
	Compute32FFast16BF       ComputeType = 75 // CUBLAS_COMPUTE_32F_FAST_16BF
	Compute32FFastTF32       ComputeType = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
	Compute32FEmulated16BFx9 ComputeType = 78 // CUBLAS_COMPUTE_32F_EMULATED_16BFX9 (13.0)
	Compute64F               ComputeType = 70 // CUBLAS_COMPUTE_64F
	Compute64FPedantic       ComputeType = 71 // CUBLAS_COMPUTE_64F_PEDANTIC
	Compute32I               ComputeType = 72 // CUBLAS_COMPUTE_32I
	Compute32IPedantic       ComputeType = 73 // CUBLAS_COMPUTE_32I_PEDANTIC
)

var computeTypeNames = map[ComputeType]string{
	Compute16F: "CUBLAS_COMPUTE_16F", Compute16FPedantic: "CUBLAS_COMPUTE_16F_PEDANTIC",
	Compute32F: "CUBLAS_COMPUTE_32F", Compute32FPedantic: "CUBLAS_COMPUTE_32F_PEDANTIC",
	Compute32FFast16F: "CUBLAS_COMPUTE_32F_FAST_16F", Compute32FFast16BF: "CUBLAS_COMPUTE_32F_FAST_16BF",
	Compute32FFastTF32: "CUBLAS_COMPUTE_32F_FAST_TF32", Compute32FEmulated16BFx9: "CUBLAS_COMPUTE_32F_EMULATED_16BFX9",
	Compute64F: "CUBLAS_COMPUTE_64F", Compute64FPedantic: "CUBLAS_COMPUTE_64F_PEDANTIC",
	Compute32I: "CUBLAS_COMPUTE_32I", Compute32IPedantic: "CUBLAS_COMPUTE_32I_PEDANTIC",
}

// String returns the enumerator name, e.g. "CUBLAS_COMPUTE_32F".
func (c ComputeType) String() string {
	if n, ok := computeTypeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("cublasComputeType_t(%d)", int32(c))
}

// ScaleType returns the data type cuBLAS expects alpha and beta to have
// for this compute type (with host pointer mode), and false for an
// unknown compute type.
func (c ComputeType) ScaleType() (DataType, bool) {
	switch c {
	case Compute16F, Compute16FPedantic:
		return R16F, true
	case Compute32F, Compute32FPedantic, Compute32FFast16F, Compute32FFast16BF,
		Compute32FFastTF32, Compute32FEmulated16BFx9:
		return R32F, true
	case Compute64F, Compute64FPedantic:
		return R64F, true
	case Compute32I, Compute32IPedantic:
		return R32I, true
	}
	return 0, false
}

// Math is a cublasMath_t, the handle's math mode.
type Math int32

// cublasMath_t values (cublas_api.h, CUDA 12.6 and 13.0). The mode is a
// base value optionally ORed with MathDisallowReducedPrecisionReduction.
const (
	DefaultMath                           Math = 0  // CUBLAS_DEFAULT_MATH
	TensorOpMath                          Math = 1  // CUBLAS_TENSOR_OP_MATH (deprecated)
	PedanticMath                          Math = 2  // CUBLAS_PEDANTIC_MATH
	TF32TensorOpMath                      Math = 3  // CUBLAS_TF32_TENSOR_OP_MATH
	FP32EmulatedBF16x9Math                Math = 4  // CUBLAS_FP32_EMULATED_BF16X9_MATH (13.0)
	MathDisallowReducedPrecisionReduction Math = 16 // CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
)

// String returns the enumerator name(s), e.g.
// "CUBLAS_DEFAULT_MATH|CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION".
func (m Math) String() string {
	var base string
	switch m &^ MathDisallowReducedPrecisionReduction {
	case DefaultMath:
		base = "CUBLAS_DEFAULT_MATH"
	case TensorOpMath:
		base = "CUBLAS_TENSOR_OP_MATH"
	case PedanticMath:
		base = "CUBLAS_PEDANTIC_MATH"
	case TF32TensorOpMath:
		base = "CUBLAS_TF32_TENSOR_OP_MATH"
	case FP32EmulatedBF16x9Math:
		base = "CUBLAS_FP32_EMULATED_BF16X9_MATH"
	default:
		return fmt.Sprintf("cublasMath_t(%d)", int32(m))
	}
	if m&MathDisallowReducedPrecisionReduction != 0 {
		base += "|CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION"
	}
	return base
}

// GemmAlgo is a cublasGemmAlgo_t.
type GemmAlgo int32

// cublasGemmAlgo_t values (cublas_api.h). Since CUDA 11 every value other
// than these behaves like the default.
const (
	GemmDefault         GemmAlgo = -1 // CUBLAS_GEMM_DEFAULT (CUBLAS_GEMM_DFALT)
	GemmDefaultTensorOp GemmAlgo = 99 // CUBLAS_GEMM_DEFAULT_TENSOR_OP (deprecated)
)

// PointerMode is a cublasPointerMode_t. This package always uses the
// default, host pointer mode, for GemmEx; the constants are exported for
// callers that share them with cuBLASLt.
type PointerMode int32

// cublasPointerMode_t values (cublas_api.h).
const (
	PointerModeHost   PointerMode = 0 // CUBLAS_POINTER_MODE_HOST
	PointerModeDevice PointerMode = 1 // CUBLAS_POINTER_MODE_DEVICE
)
