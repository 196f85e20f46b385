package cublaslt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// TestHeaderValues compiles a C probe against the installed cublasLt.h
// and compares enumerators and the heuristic-result layout with this
// package's declarations. It skips where the header is absent.
func TestHeaderValues(t *testing.T) {
	if dltest.FindHeader("cublasLt.h") == "" {
		t.Skipf("cublasLt.h not found under %v", dltest.CUDARoots())
	}
	consts := ltConsts()
	var b strings.Builder
	b.WriteString(dltest.PrintConsts("CUBLAS_VER_MAJOR", consts))
	for _, l := range []struct{ key, expr string }{
		{"sizeof_algo", "sizeof(cublasLtMatmulAlgo_t)"},
		{"sizeof_result", "sizeof(cublasLtMatmulHeuristicResult_t)"},
		{"offsetof_workspace", "offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize)"},
		{"offsetof_state", "offsetof(cublasLtMatmulHeuristicResult_t, state)"},
		{"offsetof_wavesCount", "offsetof(cublasLtMatmulHeuristicResult_t, wavesCount)"},
		{"offsetof_reserved", "offsetof(cublasLtMatmulHeuristicResult_t, reserved)"},
	} {
		fmt.Fprintf(&b, "  printf(\"%s %%lld\\n\", (long long)%s);\n", l.key, l.expr)
	}
	vals := dltest.Probe(t, []string{"cublasLt.h"}, b.String())
	major := dltest.CheckConsts(t, vals, "CUBLAS_VER_MAJOR", consts, "package cublaslt")
	t.Logf("checked against cublasLt.h of cuBLAS %d in %s", major, dltest.FindHeader("cublasLt.h"))
	for k, v := range structLayout() {
		if vals[k] != v {
			t.Errorf("%s = %d in the header, %d in cublaslt_shim.h", k, vals[k], v)
		}
	}
}

// ltConsts are the package's constants and the cublasLt.h enumerators
// they must equal, each with the first CUBLAS_VER_MAJOR that declares it.
func ltConsts() []dltest.Const {
	c, c12, c13 := dltest.Since(11), dltest.Since(12), dltest.Since(13)
	return []dltest.Const{
		c("CUBLASLT_MATMUL_DESC_COMPUTE_TYPE", int64(DescComputeType)),
		c("CUBLASLT_MATMUL_DESC_SCALE_TYPE", int64(DescScaleType)),
		c("CUBLASLT_MATMUL_DESC_POINTER_MODE", int64(DescPointerMode)),
		c("CUBLASLT_MATMUL_DESC_TRANSA", int64(DescTransA)),
		c("CUBLASLT_MATMUL_DESC_TRANSB", int64(DescTransB)),
		c("CUBLASLT_MATMUL_DESC_TRANSC", int64(DescTransC)),
		c("CUBLASLT_MATMUL_DESC_FILL_MODE", int64(DescFillMode)),
		c("CUBLASLT_MATMUL_DESC_EPILOGUE", int64(DescEpilogue)),
		c("CUBLASLT_MATMUL_DESC_BIAS_POINTER", int64(DescBiasPointer)),
		c("CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE", int64(DescBiasBatchStride)),
		c("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER", int64(DescEpilogueAuxPointer)),
		c("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD", int64(DescEpilogueAuxLd)),
		c("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE", int64(DescEpilogueAuxBatchStride)),
		c("CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE", int64(DescAlphaVectorBatchStride)),
		c12("CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET", int64(DescSMCountTarget)),
		c12("CUBLASLT_MATMUL_DESC_A_SCALE_POINTER", int64(DescAScalePointer)),
		c12("CUBLASLT_MATMUL_DESC_B_SCALE_POINTER", int64(DescBScalePointer)),
		c12("CUBLASLT_MATMUL_DESC_C_SCALE_POINTER", int64(DescCScalePointer)),
		c12("CUBLASLT_MATMUL_DESC_D_SCALE_POINTER", int64(DescDScalePointer)),
		c12("CUBLASLT_MATMUL_DESC_AMAX_D_POINTER", int64(DescAmaxDPointer)),
		c12("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE", int64(DescEpilogueAuxDataType)),
		c12("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER", int64(DescEpilogueAuxScalePointer)),
		c12("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER", int64(DescEpilogueAuxAmaxPointer)),
		c12("CUBLASLT_MATMUL_DESC_FAST_ACCUM", int64(DescFastAccum)),
		c12("CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE", int64(DescBiasDataType)),
		c13("CUBLASLT_MATMUL_DESC_A_SCALE_MODE", int64(DescAScaleMode)),
		c13("CUBLASLT_MATMUL_DESC_B_SCALE_MODE", int64(DescBScaleMode)),
		c13("CUBLASLT_MATMUL_DESC_C_SCALE_MODE", int64(DescCScaleMode)),
		c13("CUBLASLT_MATMUL_DESC_D_SCALE_MODE", int64(DescDScaleMode)),
		c13("CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE", int64(DescEpilogueAuxScaleMode)),
		c13("CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER", int64(DescDOutScalePointer)),
		c13("CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE", int64(DescDOutScaleMode)),
		c("CUBLASLT_MATRIX_LAYOUT_TYPE", int64(LayoutType)),
		c("CUBLASLT_MATRIX_LAYOUT_ORDER", int64(LayoutOrder)),
		c("CUBLASLT_MATRIX_LAYOUT_ROWS", int64(LayoutRows)),
		c("CUBLASLT_MATRIX_LAYOUT_COLS", int64(LayoutCols)),
		c("CUBLASLT_MATRIX_LAYOUT_LD", int64(LayoutLd)),
		c("CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT", int64(LayoutBatchCount)),
		c("CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET", int64(LayoutStridedBatchOffset)),
		c("CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET", int64(LayoutPlaneOffset)),
		c13("CUBLASLT_MATRIX_LAYOUT_BATCH_MODE", int64(LayoutBatchMode)),
		c("CUBLASLT_MATMUL_PREF_SEARCH_MODE", int64(PrefSearchMode)),
		c("CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES", int64(PrefMaxWorkspaceBytes)),
		c("CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK", int64(PrefReductionSchemeMask)),
		c("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES", int64(PrefMinAlignmentABytes)),
		c("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES", int64(PrefMinAlignmentBBytes)),
		c("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES", int64(PrefMinAlignmentCBytes)),
		c("CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES", int64(PrefMinAlignmentDBytes)),
		c("CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT", int64(PrefMaxWavesCount)),
		c("CUBLASLT_MATMUL_PREF_IMPL_MASK", int64(PrefImplMask)),
		c("CUBLASLT_EPILOGUE_DEFAULT", int64(EpilogueDefault)),
		c("CUBLASLT_EPILOGUE_RELU", int64(EpilogueReLU)),
		c("CUBLASLT_EPILOGUE_RELU_AUX", int64(EpilogueReLUAux)),
		c("CUBLASLT_EPILOGUE_BIAS", int64(EpilogueBias)),
		c("CUBLASLT_EPILOGUE_RELU_BIAS", int64(EpilogueReLUBias)),
		c("CUBLASLT_EPILOGUE_RELU_AUX_BIAS", int64(EpilogueReLUAuxBias)),
		c("CUBLASLT_EPILOGUE_DRELU", int64(EpilogueDReLU)),
		c("CUBLASLT_EPILOGUE_DRELU_BGRAD", int64(EpilogueDReLUBGrad)),
		c("CUBLASLT_EPILOGUE_GELU", int64(EpilogueGELU)),
		c("CUBLASLT_EPILOGUE_GELU_AUX", int64(EpilogueGELUAux)),
		c("CUBLASLT_EPILOGUE_GELU_BIAS", int64(EpilogueGELUBias)),
		c("CUBLASLT_EPILOGUE_GELU_AUX_BIAS", int64(EpilogueGELUAuxBias)),
		c("CUBLASLT_EPILOGUE_DGELU", int64(EpilogueDGELU)),
		c("CUBLASLT_EPILOGUE_DGELU_BGRAD", int64(EpilogueDGELUBGrad)),
		c("CUBLASLT_EPILOGUE_BGRADA", int64(EpilogueBGradA)),
		c("CUBLASLT_EPILOGUE_BGRADB", int64(EpilogueBGradB)),
		c("CUBLASLT_POINTER_MODE_HOST", int64(PointerModeHost)),
		c("CUBLASLT_POINTER_MODE_DEVICE", int64(PointerModeDevice)),
		c("CUBLASLT_POINTER_MODE_DEVICE_VECTOR", int64(PointerModeDeviceVector)),
		c("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO", int64(PointerModeAlphaDeviceVectorBetaZero)),
		c("CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST", int64(PointerModeAlphaDeviceVectorBetaHost)),
		c13("CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F", int64(ScaleScalar32F)),
		c13("CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F", int64(ScaleOuterVec32F)),
		c("CUBLASLT_ORDER_COL", int64(OrderCol)),
		c("CUBLASLT_ORDER_ROW", int64(OrderRow)),
		c("CUBLASLT_ORDER_COL32", int64(OrderCol32)),
		c("CUBLASLT_ORDER_COL4_4R2_8C", int64(OrderCol4_4R2_8C)),
		c("CUBLASLT_ORDER_COL32_2R_4R4", int64(OrderCol32_2R_4R4)),
	}
}
