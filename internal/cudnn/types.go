package cudnn

import "fmt"

// The enumerators of cudnn_graph.h (cuDNN 9) that the backend API calls
// here take, transcribed from the header; headers_test.go checks each
// against an installed header.

// DescriptorType is a cudnnBackendDescriptorType_t.
type DescriptorType int32

// Backend descriptor types.
const (
	DescPointwise          DescriptorType = 0  // CUDNN_BACKEND_POINTWISE_DESCRIPTOR
	DescEngine             DescriptorType = 2  // CUDNN_BACKEND_ENGINE_DESCRIPTOR
	DescEngineConfig       DescriptorType = 3  // CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
	DescEngineHeur         DescriptorType = 4  // CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR
	DescExecutionPlan      DescriptorType = 5  // CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR
	DescOperationPointwise DescriptorType = 13 // CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR
	DescOperationGraph     DescriptorType = 15 // CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR
	DescVariantPack        DescriptorType = 16 // CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR
	DescTensor             DescriptorType = 17 // CUDNN_BACKEND_TENSOR_DESCRIPTOR
	DescMatmul             DescriptorType = 18 // CUDNN_BACKEND_MATMUL_DESCRIPTOR
	DescOperationMatmul    DescriptorType = 19 // CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR
	DescReduction          DescriptorType = 21 // CUDNN_BACKEND_REDUCTION_DESCRIPTOR
	DescOperationReduction DescriptorType = 22 // CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR
	DescOperationSDPAFwd   DescriptorType = 41 // CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR (cuDNN 9.13.1)
)

// Attribute is a cudnnBackendAttributeName_t.
type Attribute int32

// Backend attributes.
const (
	AttrPointwiseMode      Attribute = 0    // CUDNN_ATTR_POINTWISE_MODE
	AttrPointwiseMathPrec  Attribute = 1    // CUDNN_ATTR_POINTWISE_MATH_PREC
	AttrPointwiseAxis      Attribute = 9    // CUDNN_ATTR_POINTWISE_AXIS
	AttrEngineHeurMode     Attribute = 200  // CUDNN_ATTR_ENGINEHEUR_MODE
	AttrEngineHeurGraph    Attribute = 201  // CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH
	AttrEngineHeurResults  Attribute = 202  // CUDNN_ATTR_ENGINEHEUR_RESULTS
	AttrEngineCfgEngine    Attribute = 300  // CUDNN_ATTR_ENGINECFG_ENGINE
	AttrEngineCfgWorkspace Attribute = 303  // CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE (cuDNN 9.2)
	AttrPlanEngineConfig   Attribute = 401  // CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG
	AttrPlanWorkspaceSize  Attribute = 402  // CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE
	AttrPointwiseOpDesc    Attribute = 750  // CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR
	AttrPointwiseOpX       Attribute = 751  // CUDNN_ATTR_OPERATION_POINTWISE_XDESC
	AttrPointwiseOpB       Attribute = 752  // CUDNN_ATTR_OPERATION_POINTWISE_BDESC
	AttrPointwiseOpY       Attribute = 753  // CUDNN_ATTR_OPERATION_POINTWISE_YDESC
	AttrPointwiseOpT       Attribute = 758  // CUDNN_ATTR_OPERATION_POINTWISE_TDESC
	AttrGraphHandle        Attribute = 800  // CUDNN_ATTR_OPERATIONGRAPH_HANDLE
	AttrGraphOps           Attribute = 801  // CUDNN_ATTR_OPERATIONGRAPH_OPS
	AttrTensorAlignment    Attribute = 900  // CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
	AttrTensorDataType     Attribute = 901  // CUDNN_ATTR_TENSOR_DATA_TYPE
	AttrTensorDims         Attribute = 902  // CUDNN_ATTR_TENSOR_DIMENSIONS
	AttrTensorStrides      Attribute = 903  // CUDNN_ATTR_TENSOR_STRIDES
	AttrTensorUID          Attribute = 906  // CUDNN_ATTR_TENSOR_UNIQUE_ID
	AttrTensorIsVirtual    Attribute = 907  // CUDNN_ATTR_TENSOR_IS_VIRTUAL
	AttrTensorIsByValue    Attribute = 908  // CUDNN_ATTR_TENSOR_IS_BY_VALUE
	AttrPackUIDs           Attribute = 1000 // CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS
	AttrPackPointers       Attribute = 1001 // CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS
	AttrPackWorkspace      Attribute = 1003 // CUDNN_ATTR_VARIANT_PACK_WORKSPACE
	AttrEngineGlobalIndex  Attribute = 1301 // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
	AttrMatmulCompType     Attribute = 1500 // CUDNN_ATTR_MATMUL_COMP_TYPE
	AttrMatmulOpA          Attribute = 1520 // CUDNN_ATTR_OPERATION_MATMUL_ADESC
	AttrMatmulOpB          Attribute = 1521 // CUDNN_ATTR_OPERATION_MATMUL_BDESC
	AttrMatmulOpC          Attribute = 1522 // CUDNN_ATTR_OPERATION_MATMUL_CDESC
	AttrMatmulOpDesc       Attribute = 1523 // CUDNN_ATTR_OPERATION_MATMUL_DESC
	AttrReductionOperator  Attribute = 1600 // CUDNN_ATTR_REDUCTION_OPERATOR
	AttrReductionCompType  Attribute = 1601 // CUDNN_ATTR_REDUCTION_COMP_TYPE
	AttrReductionOpX       Attribute = 1610 // CUDNN_ATTR_OPERATION_REDUCTION_XDESC
	AttrReductionOpY       Attribute = 1611 // CUDNN_ATTR_OPERATION_REDUCTION_YDESC
	AttrReductionOpDesc    Attribute = 1612 // CUDNN_ATTR_OPERATION_REDUCTION_DESC
	AttrSDPAFwdQ           Attribute = 2800 // CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC (cuDNN 9.13.1)
	AttrSDPAFwdK           Attribute = 2801 // CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC
	AttrSDPAFwdV           Attribute = 2802 // CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC
	AttrSDPAFwdO           Attribute = 2803 // CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC
	AttrSDPAFwdStats       Attribute = 2804 // CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC
	AttrSDPAFwdScale       Attribute = 2805 // CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC
)

// AttrType is a cudnnBackendAttributeType_t: the C type of an
// attribute's elements.
type AttrType int32

// Attribute element types.
const (
	TypeHandle            AttrType = 0  // CUDNN_TYPE_HANDLE
	TypeDataType          AttrType = 1  // CUDNN_TYPE_DATA_TYPE
	TypeBoolean           AttrType = 2  // CUDNN_TYPE_BOOLEAN
	TypeInt64             AttrType = 3  // CUDNN_TYPE_INT64
	TypeFloat             AttrType = 4  // CUDNN_TYPE_FLOAT
	TypeVoidPtr           AttrType = 6  // CUDNN_TYPE_VOID_PTR
	TypeHeurMode          AttrType = 8  // CUDNN_TYPE_HEUR_MODE
	TypePointwiseMode     AttrType = 14 // CUDNN_TYPE_POINTWISE_MODE
	TypeBackendDescriptor AttrType = 15 // CUDNN_TYPE_BACKEND_DESCRIPTOR
	TypeReductionOperator AttrType = 18 // CUDNN_TYPE_REDUCTION_OPERATOR_TYPE
)

// DataType is a cudnnDataType_t.
type DataType int32

// Data types.
const (
	DataFloat    DataType = 0  // CUDNN_DATA_FLOAT
	DataHalf     DataType = 2  // CUDNN_DATA_HALF
	DataInt32    DataType = 4  // CUDNN_DATA_INT32
	DataBFloat16 DataType = 9  // CUDNN_DATA_BFLOAT16
	DataBoolean  DataType = 11 // CUDNN_DATA_BOOLEAN
)

// String names the data type as the header does, less its prefix.
func (t DataType) String() string {
	switch t {
	case DataFloat:
		return "FLOAT"
	case DataHalf:
		return "HALF"
	case DataInt32:
		return "INT32"
	case DataBFloat16:
		return "BFLOAT16"
	case DataBoolean:
		return "BOOLEAN"
	}
	return fmt.Sprintf("DataType(%d)", int32(t))
}

// PointwiseMode is a cudnnPointwiseMode_t.
type PointwiseMode int32

// Pointwise modes.
const (
	PointwiseAdd          PointwiseMode = 0   // CUDNN_POINTWISE_ADD
	PointwiseMul          PointwiseMode = 1   // CUDNN_POINTWISE_MUL
	PointwiseDiv          PointwiseMode = 6   // CUDNN_POINTWISE_DIV
	PointwiseSub          PointwiseMode = 9   // CUDNN_POINTWISE_SUB
	PointwiseExp          PointwiseMode = 13  // CUDNN_POINTWISE_EXP
	PointwiseLog          PointwiseMode = 15  // CUDNN_POINTWISE_LOG
	PointwiseCmpGE        PointwiseMode = 303 // CUDNN_POINTWISE_CMP_GE
	PointwiseGenIndex     PointwiseMode = 501 // CUDNN_POINTWISE_GEN_INDEX
	PointwiseBinarySelect PointwiseMode = 601 // CUDNN_POINTWISE_BINARY_SELECT
)

// String names the mode as the header does, less its prefix.
func (m PointwiseMode) String() string {
	switch m {
	case PointwiseAdd:
		return "ADD"
	case PointwiseMul:
		return "MUL"
	case PointwiseDiv:
		return "DIV"
	case PointwiseSub:
		return "SUB"
	case PointwiseExp:
		return "EXP"
	case PointwiseLog:
		return "LOG"
	case PointwiseCmpGE:
		return "CMP_GE"
	case PointwiseGenIndex:
		return "GEN_INDEX"
	case PointwiseBinarySelect:
		return "BINARY_SELECT"
	}
	return fmt.Sprintf("PointwiseMode(%d)", int32(m))
}

// ReduceOp is a cudnnReduceTensorOp_t.
type ReduceOp int32

// Reduction operators.
const (
	ReduceAdd ReduceOp = 0 // CUDNN_REDUCE_TENSOR_ADD
	ReduceMax ReduceOp = 3 // CUDNN_REDUCE_TENSOR_MAX
)

// String names the operator as the header does, less its prefix.
func (r ReduceOp) String() string {
	switch r {
	case ReduceAdd:
		return "ADD"
	case ReduceMax:
		return "MAX"
	}
	return fmt.Sprintf("ReduceOp(%d)", int32(r))
}

// HeurMode is a cudnnBackendHeurMode_t.
type HeurMode int32

// Heuristics modes.
const (
	HeurModeInstant  HeurMode = 0 // CUDNN_HEUR_MODE_INSTANT
	HeurModeB        HeurMode = 1 // CUDNN_HEUR_MODE_B
	HeurModeFallback HeurMode = 2 // CUDNN_HEUR_MODE_FALLBACK
	HeurModeA        HeurMode = 3 // CUDNN_HEUR_MODE_A
)
