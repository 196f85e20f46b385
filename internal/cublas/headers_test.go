package cublas_test

import (
	"testing"

	"github.com/kreplay/kreplay/internal/cublas"
	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// cublasConsts are the package's constants and the cublas_api.h
// enumerators they must equal, each with the first CUBLAS_VER_MAJOR that
// declares it.
func cublasConsts() []dltest.Const {
	c, c12, c13 := dltest.Since(11), dltest.Since(12), dltest.Since(13)
	return []dltest.Const{
		c("CUBLAS_STATUS_SUCCESS", int64(cublas.StatusSuccess)),
		c("CUBLAS_STATUS_NOT_INITIALIZED", int64(cublas.StatusNotInitialized)),
		c("CUBLAS_STATUS_ALLOC_FAILED", int64(cublas.StatusAllocFailed)),
		c("CUBLAS_STATUS_INVALID_VALUE", int64(cublas.StatusInvalidValue)),
		c("CUBLAS_STATUS_ARCH_MISMATCH", int64(cublas.StatusArchMismatch)),
		c("CUBLAS_STATUS_MAPPING_ERROR", int64(cublas.StatusMappingError)),
		c("CUBLAS_STATUS_EXECUTION_FAILED", int64(cublas.StatusExecutionFailed)),
		c("CUBLAS_STATUS_INTERNAL_ERROR", int64(cublas.StatusInternalError)),
		c("CUBLAS_STATUS_NOT_SUPPORTED", int64(cublas.StatusNotSupported)),
		c("CUBLAS_STATUS_LICENSE_ERROR", int64(cublas.StatusLicenseError)),
		c("CUBLAS_OP_N", int64(cublas.OpN)),
		c("CUBLAS_OP_T", int64(cublas.OpT)),
		c("CUBLAS_OP_C", int64(cublas.OpC)),
		c("CUDA_R_16F", int64(cublas.R16F)),
		c("CUDA_C_16F", int64(cublas.C16F)),
		c("CUDA_R_16BF", int64(cublas.R16BF)),
		c("CUDA_C_16BF", int64(cublas.C16BF)),
		c("CUDA_R_32F", int64(cublas.R32F)),
		c("CUDA_C_32F", int64(cublas.C32F)),
		c("CUDA_R_64F", int64(cublas.R64F)),
		c("CUDA_C_64F", int64(cublas.C64F)),
		c("CUDA_R_4I", int64(cublas.R4I)),
		c("CUDA_R_8I", int64(cublas.R8I)),
		c("CUDA_C_8I", int64(cublas.C8I)),
		c("CUDA_R_8U", int64(cublas.R8U)),
		c("CUDA_R_16I", int64(cublas.R16I)),
		c("CUDA_R_32I", int64(cublas.R32I)),
		c("CUDA_C_32I", int64(cublas.C32I)),
		c("CUDA_R_32U", int64(cublas.R32U)),
		c("CUDA_R_64I", int64(cublas.R64I)),
		c("CUDA_R_64U", int64(cublas.R64U)),
		c12("CUDA_R_8F_E4M3", int64(cublas.R8FE4M3)),
		c12("CUDA_R_8F_E5M2", int64(cublas.R8FE5M2)),
		c13("CUDA_R_8F_UE8M0", int64(cublas.R8FUE8M0)),
		c13("CUDA_R_6F_E2M3", int64(cublas.R6FE2M3)),
		c13("CUDA_R_6F_E3M2", int64(cublas.R6FE3M2)),
		c13("CUDA_R_4F_E2M1", int64(cublas.R4FE2M1)),
		c("CUBLAS_COMPUTE_16F", int64(cublas.Compute16F)),
		c("CUBLAS_COMPUTE_16F_PEDANTIC", int64(cublas.Compute16FPedantic)),
		c("CUBLAS_COMPUTE_32F", int64(cublas.Compute32F)),
		c("CUBLAS_COMPUTE_32F_PEDANTIC", int64(cublas.Compute32FPedantic)),
		c("CUBLAS_COMPUTE_32F_FAST_16F", int64(cublas.Compute32FFast16F)),
		c("CUBLAS_COMPUTE_32F_FAST_16BF", int64(cublas.Compute32FFast16BF)),
		c("CUBLAS_COMPUTE_32F_FAST_TF32", int64(cublas.Compute32FFastTF32)),
		c13("CUBLAS_COMPUTE_32F_EMULATED_16BFX9", int64(cublas.Compute32FEmulated16BFx9)),
		c("CUBLAS_COMPUTE_64F", int64(cublas.Compute64F)),
		c("CUBLAS_COMPUTE_64F_PEDANTIC", int64(cublas.Compute64FPedantic)),
		c("CUBLAS_COMPUTE_32I", int64(cublas.Compute32I)),
		c("CUBLAS_COMPUTE_32I_PEDANTIC", int64(cublas.Compute32IPedantic)),
		c("CUBLAS_DEFAULT_MATH", int64(cublas.DefaultMath)),
		c("CUBLAS_TENSOR_OP_MATH", int64(cublas.TensorOpMath)),
		c("CUBLAS_PEDANTIC_MATH", int64(cublas.PedanticMath)),
		c("CUBLAS_TF32_TENSOR_OP_MATH", int64(cublas.TF32TensorOpMath)),
		c13("CUBLAS_FP32_EMULATED_BF16X9_MATH", int64(cublas.FP32EmulatedBF16x9Math)),
		c("CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION", int64(cublas.MathDisallowReducedPrecisionReduction)),
		c("CUBLAS_GEMM_DEFAULT", int64(cublas.GemmDefault)),
		c("CUBLAS_GEMM_DEFAULT_TENSOR_OP", int64(cublas.GemmDefaultTensorOp)),
		c("CUBLAS_POINTER_MODE_HOST", int64(cublas.PointerModeHost)),
		c("CUBLAS_POINTER_MODE_DEVICE", int64(cublas.PointerModeDevice)),
	}
}

// TestHeaderValues compiles a C probe against the installed cublas_api.h
// and compares every enumerator with the package's constant. It runs
// wherever the CUDA headers are (CUDA_HOME, CUDA_PATH or
// /usr/local/cuda) and skips elsewhere.
func TestHeaderValues(t *testing.T) {
	if dltest.FindHeader("cublas_api.h") == "" {
		t.Skipf("cublas_api.h not found under %v", dltest.CUDARoots())
	}
	consts := cublasConsts()
	vals := dltest.Probe(t, []string{"cublas_v2.h"}, dltest.PrintConsts("CUBLAS_VER_MAJOR", consts))
	major := dltest.CheckConsts(t, vals, "CUBLAS_VER_MAJOR", consts, "package cublas")
	t.Logf("checked against cublas_api.h of cuBLAS %d in %s", major, dltest.FindHeader("cublas_api.h"))
}
