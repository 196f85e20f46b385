package cublaslt

// MatmulDescAttribute is a cublasLtMatmulDescAttributes_t. The comment
// on each constant gives the attribute's C value type.
type MatmulDescAttribute int32

// cublasLtMatmulDescAttributes_t values, verified against cublasLt.h of
// CUDA 12.6 and 13.0; those marked 13.0 are absent from 12.6.
const (
	DescComputeType             MatmulDescAttribute = 0  // int32 cublasComputeType_t
	DescScaleType               MatmulDescAttribute = 1  // int32 cudaDataType_t
	DescPointerMode             MatmulDescAttribute = 2  // int32 PointerMode
	DescTransA                  MatmulDescAttribute = 3  // int32 cublasOperation_t
	DescTransB                  MatmulDescAttribute = 4  // int32 cublasOperation_t
	DescTransC                  MatmulDescAttribute = 5  // int32 cublasOperation_t
	DescFillMode                MatmulDescAttribute = 6  // int32 cublasFillMode_t
	DescEpilogue                MatmulDescAttribute = 7  // uint32 Epilogue
	DescBiasPointer             MatmulDescAttribute = 8  // void* (device)
	DescBiasBatchStride         MatmulDescAttribute = 10 // int64
	DescEpilogueAuxPointer      MatmulDescAttribute = 11 // void* (device)
	DescEpilogueAuxLd           MatmulDescAttribute = 12 // int64
	DescEpilogueAuxBatchStride  MatmulDescAttribute = 13 // int64
	DescAlphaVectorBatchStride  MatmulDescAttribute = 14 // int64
	DescSMCountTarget           MatmulDescAttribute = 15 // int32
	DescAScalePointer           MatmulDescAttribute = 17 // void* (device)
	DescBScalePointer           MatmulDescAttribute = 18 // void* (device)
	DescCScalePointer           MatmulDescAttribute = 19 // void* (device)
	DescDScalePointer           MatmulDescAttribute = 20 // void* (device)
	DescAmaxDPointer            MatmulDescAttribute = 21 // void* (device)
	DescEpilogueAuxDataType     MatmulDescAttribute = 22 // int32 cudaDataType_t
	DescEpilogueAuxScalePointer MatmulDescAttribute = 23 // void* (device)
	DescEpilogueAuxAmaxPointer  MatmulDescAttribute = 24 // void* (device)
	DescFastAccum               MatmulDescAttribute = 25 // int8
	DescBiasDataType            MatmulDescAttribute = 26 // int32 cudaDataType_t
	DescAScaleMode              MatmulDescAttribute = 31 // int32 (13.0)
	DescBScaleMode              MatmulDescAttribute = 32 // int32 (13.0)
	DescCScaleMode              MatmulDescAttribute = 33 // int32 (13.0)
	DescDScaleMode              MatmulDescAttribute = 34 // int32 (13.0)
	DescEpilogueAuxScaleMode    MatmulDescAttribute = 35 // int32 (13.0)
	DescDOutScalePointer        MatmulDescAttribute = 36 // void* (13.0)
	DescDOutScaleMode           MatmulDescAttribute = 37 // int32 (13.0)
)

// MatrixLayoutAttribute is a cublasLtMatrixLayoutAttribute_t.
type MatrixLayoutAttribute int32

// cublasLtMatrixLayoutAttribute_t values (cublasLt.h, CUDA 12.6 and 13.0).
const (
	LayoutType               MatrixLayoutAttribute = 0 // uint32 cudaDataType_t
	LayoutOrder              MatrixLayoutAttribute = 1 // int32 Order
	LayoutRows               MatrixLayoutAttribute = 2 // uint64
	LayoutCols               MatrixLayoutAttribute = 3 // uint64
	LayoutLd                 MatrixLayoutAttribute = 4 // int64
	LayoutBatchCount         MatrixLayoutAttribute = 5 // int32
	LayoutStridedBatchOffset MatrixLayoutAttribute = 6 // int64, in elements
	LayoutPlaneOffset        MatrixLayoutAttribute = 7 // int64
	LayoutBatchMode          MatrixLayoutAttribute = 8 // uint32 (13.0)
)

// MatmulPreferenceAttribute is a cublasLtMatmulPreferenceAttributes_t.
type MatmulPreferenceAttribute int32

// cublasLtMatmulPreferenceAttributes_t values (cublasLt.h, CUDA 12.6 and
// 13.0).
const (
	PrefSearchMode          MatmulPreferenceAttribute = 0  // uint32
	PrefMaxWorkspaceBytes   MatmulPreferenceAttribute = 1  // uint64
	PrefReductionSchemeMask MatmulPreferenceAttribute = 3  // uint32
	PrefMinAlignmentABytes  MatmulPreferenceAttribute = 5  // uint32
	PrefMinAlignmentBBytes  MatmulPreferenceAttribute = 6  // uint32
	PrefMinAlignmentCBytes  MatmulPreferenceAttribute = 7  // uint32
	PrefMinAlignmentDBytes  MatmulPreferenceAttribute = 8  // uint32
	PrefMaxWavesCount       MatmulPreferenceAttribute = 9  // float32
	PrefImplMask            MatmulPreferenceAttribute = 12 // uint64
)

// Epilogue is a cublasLtEpilogue_t (set with DescEpilogue, a uint32).
type Epilogue uint32

// cublasLtEpilogue_t values (cublasLt.h, CUDA 12.6 and 13.0), with the
// header's bit compositions evaluated.
const (
	EpilogueDefault     Epilogue = 1   // CUBLASLT_EPILOGUE_DEFAULT
	EpilogueReLU        Epilogue = 2   // CUBLASLT_EPILOGUE_RELU
	EpilogueReLUAux     Epilogue = 130 // CUBLASLT_EPILOGUE_RELU_AUX (RELU|128)
	EpilogueBias        Epilogue = 4   // CUBLASLT_EPILOGUE_BIAS
	EpilogueReLUBias    Epilogue = 6   // CUBLASLT_EPILOGUE_RELU_BIAS
	EpilogueReLUAuxBias Epilogue = 134 // CUBLASLT_EPILOGUE_RELU_AUX_BIAS
	EpilogueDReLU       Epilogue = 136 // CUBLASLT_EPILOGUE_DRELU (8|128)
	EpilogueDReLUBGrad  Epilogue = 152 // CUBLASLT_EPILOGUE_DRELU_BGRAD (DRELU|16)
	EpilogueGELU        Epilogue = 32  // CUBLASLT_EPILOGUE_GELU
	EpilogueGELUAux     Epilogue = 160 // CUBLASLT_EPILOGUE_GELU_AUX (GELU|128)
	EpilogueGELUBias    Epilogue = 36  // CUBLASLT_EPILOGUE_GELU_BIAS
	EpilogueGELUAuxBias Epilogue = 164 // CUBLASLT_EPILOGUE_GELU_AUX_BIAS
	EpilogueDGELU       Epilogue = 192 // CUBLASLT_EPILOGUE_DGELU (64|128)
	EpilogueDGELUBGrad  Epilogue = 208 // CUBLASLT_EPILOGUE_DGELU_BGRAD (DGELU|16)
	EpilogueBGradA      Epilogue = 256 // CUBLASLT_EPILOGUE_BGRADA
	EpilogueBGradB      Epilogue = 512 // CUBLASLT_EPILOGUE_BGRADB
)

// MatrixScale is a cublasLtMatmulMatrixScale_t, how a scale pointer's
// values apply to a matrix (set with DescAScaleMode and friends, int32).
type MatrixScale int32

// cublasLtMatmulMatrixScale_t values (cublasLt.h, CUDA 12.9 and 13.0).
// Only the two modes PyTorch uses for FP8 scaling on sm_90 are declared:
// scalar for tensorwise scales (its source inlines the value 0 for older
// headers), outer vector for rowwise ones (cuBLASLt 12.9 and later).
const (
	ScaleScalar32F   MatrixScale = 0 // CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F
	ScaleOuterVec32F MatrixScale = 3 // CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
)

// PointerMode is a cublasLtPointerMode_t (set with DescPointerMode).
type PointerMode int32

// cublasLtPointerMode_t values (cublasLt.h, CUDA 12.6 and 13.0).
const (
	PointerModeHost                      PointerMode = 0
	PointerModeDevice                    PointerMode = 1
	PointerModeDeviceVector              PointerMode = 2
	PointerModeAlphaDeviceVectorBetaZero PointerMode = 3
	PointerModeAlphaDeviceVectorBetaHost PointerMode = 4
)

// Order is a cublasLtOrder_t, a matrix memory order (LayoutOrder).
type Order int32

// cublasLtOrder_t values (cublasLt.h, CUDA 12.6 and 13.0).
const (
	OrderCol          Order = 0
	OrderRow          Order = 1
	OrderCol32        Order = 2
	OrderCol4_4R2_8C  Order = 3
	OrderCol32_2R_4R4 Order = 4
)
