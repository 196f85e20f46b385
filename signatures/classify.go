package signatures

import (
	"strings"
)

// gemmOps are the aten ops whose GEMM kernels tier 2 replays with cuBLAS.
var gemmOps = map[string]bool{
	"aten::mm": true, "aten::addmm": true, "aten::bmm": true, "aten::baddbmm": true,
	"aten::matmul": true, "aten::linear": true, "aten::_addmm_activation": true,
}

// opClasses maps aten op names to tier-3 classes.
var opClasses = map[string]Class{}

func init() {
	add := func(c Class, names ...string) {
		for _, n := range names {
			opClasses["aten::"+n] = c
			opClasses["aten::"+n+"_"] = c // in-place variant
		}
	}
	add(ClassElementwise, "add", "sub", "rsub", "mul", "div", "neg", "pow", "rsqrt", "sqrt", "tanh",
		"gelu", "silu", "sigmoid", "relu", "exp", "log", "sin", "cos", "abs", "reciprocal", "erf",
		"eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_not", "bitwise_xor",
		"logical_and", "logical_or", "logical_not", "where", "masked_fill", "clamp", "clamp_min",
		"clamp_max", "minimum", "maximum", "addcmul", "addcdiv", "lerp", "floor_divide",
		"remainder", "fmod", "triu", "tril", "sign", "isnan", "isinf", "nan_to_num")
	add(ClassCopy, "copy", "_to_copy", "to", "clone", "contiguous", "_local_scalar_dense", "item")
	add(ClassFill, "fill", "zero", "zeros", "ones", "full", "arange", "empty_like", "zeros_like",
		"ones_like", "full_like", "normal", "uniform", "random")
	add(ClassReduce, "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "any", "all",
		"prod", "norm", "linalg_vector_norm", "var", "std", "topk", "sort")
	add(ClassNorm, "native_layer_norm", "layer_norm", "rms_norm", "_fused_rms_norm", "group_norm",
		"native_group_norm", "batch_norm", "native_batch_norm")
	add(ClassSoftmax, "_softmax", "softmax", "log_softmax", "_log_softmax")
	add(ClassCat, "cat", "stack")
	add(ClassIndex, "index", "index_select", "gather", "scatter", "scatter_add", "embedding",
		"index_put", "_index_put_impl", "masked_select", "take", "index_add", "index_copy")
	add(ClassScan, "cumsum", "cumprod", "_cummax_helper", "_cummin_helper", "logcumsumexp")
	add(ClassAttention, "_cudnn_attention_forward", "_flash_attention_forward",
		"_efficient_attention_forward", "_scaled_dot_product_flash_attention",
		"_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
		"scaled_dot_product_attention")
}

// kernelClasses maps substrings of kernel names to classes, for kernels
// whose op is unknown or unlisted. Order matters: first match wins.
var kernelClasses = []struct {
	sub   string
	class Class
}{
	{"sdpa", ClassAttention}, {"flash", ClassAttention}, {"fmha", ClassAttention}, {"attention", ClassAttention},
	{"layer_norm", ClassNorm}, {"rms_norm", ClassNorm}, {"softmax", ClassSoftmax},
	{"CatArrayBatchedCopy", ClassCat}, {"gather", ClassIndex}, {"index", ClassIndex}, {"embedding", ClassIndex},
	{"scan", ClassScan}, {"reduce_kernel", ClassReduce}, {"fill", ClassFill},
	{"elementwise", ClassElementwise}, {"copy", ClassCopy},
}

// isGEMMKernel reports whether a kernel name is a BLAS kernel.
func isGEMMKernel(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"nvjet", "gemm", "gemv", "cutlass", "splitkreduce", "xmma", "cublas"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// isSplitKReduce reports whether a kernel is the reduction of a split-K GEMM.
func isSplitKReduce(name string) bool {
	return strings.Contains(strings.ToLower(name), "splitkreduce")
}

// isNCCLKernel reports whether a kernel belongs to NCCL.
func isNCCLKernel(name string) bool {
	return strings.HasPrefix(name, "ncclDevKernel") || strings.HasPrefix(name, "ncclKernel")
}

// classify returns a signature's tier and class from its activity, op and
// kernel name.
func classify(act Activity, op, kernel string, collective bool) (Tier, Class) {
	switch act {
	case ActivityMemcpy:
		return TierMemory, ClassMemcpy
	case ActivityMemset:
		return TierMemory, ClassMemset
	}
	if collective || isNCCLKernel(kernel) {
		return TierLibrary, ClassCollective
	}
	c, known := opClasses[op]
	if c == ClassAttention {
		return TierKernel, ClassAttention
	}
	if isGEMMKernel(kernel) && (gemmOps[op] || !known) {
		return TierLibrary, ClassGEMM
	}
	if known {
		return TierKernel, c
	}
	for _, kc := range kernelClasses {
		if strings.Contains(kernel, kc.sub) {
			return TierKernel, kc.class
		}
	}
	return TierKernel, ClassOther
}

// dtypeNames maps the profiler's dtype spellings to short names.
var dtypeNames = map[string]string{
	"c10::Half": "f16", "c10::BFloat16": "bf16", "float": "f32", "double": "f64",
	"long int": "i64", "int64_t": "i64", "int": "i32", "short int": "i16", "signed char": "i8",
	"unsigned char": "u8", "bool": "bool", "c10::Float8_e4m3fn": "f8e4m3", "c10::Float8_e5m2": "f8e5m2",
	"c10::complex<float>": "c64", "c10::complex<double>": "c128",
	// NCCL's spellings in collective kernel args.
	"Half": "f16", "BFloat16": "bf16", "Float": "f32", "Double": "f64", "Long": "i64", "Int": "i32",
	"Char": "i8", "Byte": "u8", "Bool": "bool",
}

// DType returns kreplay's short name for a profiler dtype ("c10::Half" is
// "f16"), or the name unchanged when it is not known.
func DType(profiler string) string {
	if s, ok := dtypeNames[profiler]; ok {
		return s
	}
	return profiler
}

// DTypeSize returns the size in bytes of an element of a short dtype, or 0
// when unknown.
func DTypeSize(dtype string) int64 {
	switch dtype {
	case "f16", "bf16", "i16":
		return 2
	case "f32", "i32":
		return 4
	case "f64", "i64", "c64":
		return 8
	case "c128":
		return 16
	case "i8", "u8", "bool", "f8e4m3", "f8e5m2":
		return 1
	}
	return 0
}

// copyKind parses a Kineto memcpy name such as
// "Memcpy HtoD (Pageable -> Device)" into its direction and host memory.
func copyKind(name string) (CopyKind, string) {
	var k CopyKind
	for _, c := range []CopyKind{HtoD, DtoH, DtoD, HtoH, PtoP} {
		if strings.Contains(name, " "+string(c)) {
			k = c
			break
		}
	}
	host := ""
	switch {
	case strings.Contains(name, "Pageable"):
		host = "pageable"
	case strings.Contains(name, "Pinned"):
		host = "pinned"
	}
	return k, host
}
