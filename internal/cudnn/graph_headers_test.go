package cudnn

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/dl/dltest"
)

// graphHeaderDir finds cuDNN 9's cudnn_graph.h under $CUDNN_HOME, the
// CUDA toolkit and the system's include directories.
func graphHeaderDir() string {
	dir, _ := dltest.FindLibraryHeader("CUDNN_HOME", "cudnn_graph.h")
	return dir
}

// graphConsts are types.go's constants and the cudnn_graph.h enumerators
// they must equal, each with the first CUDNN_VERSION that declares it.
func graphConsts() []dltest.Const {
	c, c913 := dltest.Since(90000), dltest.Since(91301)
	return []dltest.Const{
		c("CUDNN_BACKEND_POINTWISE_DESCRIPTOR", int64(DescPointwise)),
		c("CUDNN_BACKEND_ENGINE_DESCRIPTOR", int64(DescEngine)),
		c("CUDNN_BACKEND_ENGINECFG_DESCRIPTOR", int64(DescEngineConfig)),
		c("CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR", int64(DescEngineHeur)),
		c("CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", int64(DescExecutionPlan)),
		c("CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR", int64(DescOperationPointwise)),
		c("CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR", int64(DescOperationGraph)),
		c("CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR", int64(DescVariantPack)),
		c("CUDNN_BACKEND_TENSOR_DESCRIPTOR", int64(DescTensor)),
		c("CUDNN_BACKEND_MATMUL_DESCRIPTOR", int64(DescMatmul)),
		c("CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR", int64(DescOperationMatmul)),
		c("CUDNN_BACKEND_REDUCTION_DESCRIPTOR", int64(DescReduction)),
		c("CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR", int64(DescOperationReduction)),
		c913("CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR", int64(DescOperationSDPAFwd)),
		c("CUDNN_ATTR_POINTWISE_MODE", int64(AttrPointwiseMode)),
		c("CUDNN_ATTR_POINTWISE_MATH_PREC", int64(AttrPointwiseMathPrec)),
		c("CUDNN_ATTR_POINTWISE_AXIS", int64(AttrPointwiseAxis)),
		c("CUDNN_ATTR_ENGINEHEUR_MODE", int64(AttrEngineHeurMode)),
		c("CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH", int64(AttrEngineHeurGraph)),
		c("CUDNN_ATTR_ENGINEHEUR_RESULTS", int64(AttrEngineHeurResults)),
		c("CUDNN_ATTR_ENGINECFG_ENGINE", int64(AttrEngineCfgEngine)),
		c("CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE", int64(AttrEngineCfgWorkspace)),
		c("CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG", int64(AttrPlanEngineConfig)),
		c("CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE", int64(AttrPlanWorkspaceSize)),
		c("CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR", int64(AttrPointwiseOpDesc)),
		c("CUDNN_ATTR_OPERATION_POINTWISE_XDESC", int64(AttrPointwiseOpX)),
		c("CUDNN_ATTR_OPERATION_POINTWISE_BDESC", int64(AttrPointwiseOpB)),
		c("CUDNN_ATTR_OPERATION_POINTWISE_YDESC", int64(AttrPointwiseOpY)),
		c("CUDNN_ATTR_OPERATION_POINTWISE_TDESC", int64(AttrPointwiseOpT)),
		c("CUDNN_ATTR_OPERATIONGRAPH_HANDLE", int64(AttrGraphHandle)),
		c("CUDNN_ATTR_OPERATIONGRAPH_OPS", int64(AttrGraphOps)),
		c("CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", int64(AttrTensorAlignment)),
		c("CUDNN_ATTR_TENSOR_DATA_TYPE", int64(AttrTensorDataType)),
		c("CUDNN_ATTR_TENSOR_DIMENSIONS", int64(AttrTensorDims)),
		c("CUDNN_ATTR_TENSOR_STRIDES", int64(AttrTensorStrides)),
		c("CUDNN_ATTR_TENSOR_UNIQUE_ID", int64(AttrTensorUID)),
		c("CUDNN_ATTR_TENSOR_IS_VIRTUAL", int64(AttrTensorIsVirtual)),
		c("CUDNN_ATTR_TENSOR_IS_BY_VALUE", int64(AttrTensorIsByValue)),
		c("CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS", int64(AttrPackUIDs)),
		c("CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS", int64(AttrPackPointers)),
		c("CUDNN_ATTR_VARIANT_PACK_WORKSPACE", int64(AttrPackWorkspace)),
		c("CUDNN_ATTR_ENGINE_GLOBAL_INDEX", int64(AttrEngineGlobalIndex)),
		c("CUDNN_ATTR_MATMUL_COMP_TYPE", int64(AttrMatmulCompType)),
		c("CUDNN_ATTR_OPERATION_MATMUL_ADESC", int64(AttrMatmulOpA)),
		c("CUDNN_ATTR_OPERATION_MATMUL_BDESC", int64(AttrMatmulOpB)),
		c("CUDNN_ATTR_OPERATION_MATMUL_CDESC", int64(AttrMatmulOpC)),
		c("CUDNN_ATTR_OPERATION_MATMUL_DESC", int64(AttrMatmulOpDesc)),
		c("CUDNN_ATTR_REDUCTION_OPERATOR", int64(AttrReductionOperator)),
		c("CUDNN_ATTR_REDUCTION_COMP_TYPE", int64(AttrReductionCompType)),
		c("CUDNN_ATTR_OPERATION_REDUCTION_XDESC", int64(AttrReductionOpX)),
		c("CUDNN_ATTR_OPERATION_REDUCTION_YDESC", int64(AttrReductionOpY)),
		c("CUDNN_ATTR_OPERATION_REDUCTION_DESC", int64(AttrReductionOpDesc)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC", int64(AttrSDPAFwdQ)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC", int64(AttrSDPAFwdK)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC", int64(AttrSDPAFwdV)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC", int64(AttrSDPAFwdO)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC", int64(AttrSDPAFwdStats)),
		c913("CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC", int64(AttrSDPAFwdScale)),
		c("CUDNN_TYPE_HANDLE", int64(TypeHandle)),
		c("CUDNN_TYPE_DATA_TYPE", int64(TypeDataType)),
		c("CUDNN_TYPE_BOOLEAN", int64(TypeBoolean)),
		c("CUDNN_TYPE_INT64", int64(TypeInt64)),
		c("CUDNN_TYPE_FLOAT", int64(TypeFloat)),
		c("CUDNN_TYPE_VOID_PTR", int64(TypeVoidPtr)),
		c("CUDNN_TYPE_HEUR_MODE", int64(TypeHeurMode)),
		c("CUDNN_TYPE_POINTWISE_MODE", int64(TypePointwiseMode)),
		c("CUDNN_TYPE_BACKEND_DESCRIPTOR", int64(TypeBackendDescriptor)),
		c("CUDNN_TYPE_REDUCTION_OPERATOR_TYPE", int64(TypeReductionOperator)),
		c("CUDNN_DATA_FLOAT", int64(DataFloat)),
		c("CUDNN_DATA_HALF", int64(DataHalf)),
		c("CUDNN_DATA_INT32", int64(DataInt32)),
		c("CUDNN_DATA_BFLOAT16", int64(DataBFloat16)),
		c("CUDNN_DATA_BOOLEAN", int64(DataBoolean)),
		c("CUDNN_POINTWISE_ADD", int64(PointwiseAdd)),
		c("CUDNN_POINTWISE_MUL", int64(PointwiseMul)),
		c("CUDNN_POINTWISE_DIV", int64(PointwiseDiv)),
		c("CUDNN_POINTWISE_SUB", int64(PointwiseSub)),
		c("CUDNN_POINTWISE_EXP", int64(PointwiseExp)),
		c("CUDNN_POINTWISE_LOG", int64(PointwiseLog)),
		c("CUDNN_POINTWISE_CMP_GE", int64(PointwiseCmpGE)),
		c("CUDNN_POINTWISE_GEN_INDEX", int64(PointwiseGenIndex)),
		c("CUDNN_POINTWISE_BINARY_SELECT", int64(PointwiseBinarySelect)),
		c("CUDNN_REDUCE_TENSOR_ADD", int64(ReduceAdd)),
		c("CUDNN_REDUCE_TENSOR_MAX", int64(ReduceMax)),
		c("CUDNN_HEUR_MODE_INSTANT", int64(HeurModeInstant)),
		c("CUDNN_HEUR_MODE_B", int64(HeurModeB)),
		c("CUDNN_HEUR_MODE_FALLBACK", int64(HeurModeFallback)),
		c("CUDNN_HEUR_MODE_A", int64(HeurModeA)),
	}
}

// TestGraphHeaderValues compiles a probe against the installed
// cudnn_graph.h (cuDNN 9) and compares its enumerators with types.go's.
// The header includes CUDA's cuda_runtime_api.h: the probe also gets the
// CUDA toolkit's include directories and $CPATH. It skips where the
// header or a C compiler is absent.
func TestGraphHeaderValues(t *testing.T) {
	dir := graphHeaderDir()
	if dir == "" {
		t.Skip("cudnn_graph.h not found (cuDNN 9's headers are not installed; set CUDNN_HOME)")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler (cc) to build the header probe")
	}
	consts := graphConsts()
	src := "#include <stdio.h>\n#include <cudnn_graph.h>\n#include <cudnn_version.h>\nint main(void) {\n" +
		dltest.PrintConsts("CUDNN_VERSION", consts) + "  return 0;\n}\n"
	tmp := t.TempDir()
	cfile, exe := filepath.Join(tmp, "probe.c"), filepath.Join(tmp, "probe")
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-std=gnu11", "-w", "-o", exe, cfile, "-I" + dir}
	for _, d := range dltest.IncludeDirs() {
		args = append(args, "-I"+d)
	}
	if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("running the probe: %v", err)
	}
	vals, err := dltest.ParseValues(string(out))
	if err != nil {
		t.Fatal(err)
	}
	v := dltest.CheckConsts(t, vals, "CUDNN_VERSION", consts, "package cudnn")
	t.Logf("checked %d enumerators against cudnn_graph.h of cuDNN %s in %s", len(consts), VersionString(int(v)), dir)
	if v < 90000 {
		t.Errorf("cudnn_graph.h of CUDNN_VERSION %d: cuDNN 9 declares it", v)
	}
}
