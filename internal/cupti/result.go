package cupti

import (
	"errors"
	"fmt"
)

// Result is a CUptiResult.
type Result int32

// CUptiResult values from cupti_result.h (CUDA 12.6 header text; 43-46
// from the CUDA 12.8/13.0 headers via their bindgen output).
const (
	Success                     Result = 0
	ErrorInvalidParameter       Result = 1
	ErrorInvalidDevice          Result = 2
	ErrorInvalidContext         Result = 3
	ErrorInvalidOperation       Result = 7
	ErrorOutOfMemory            Result = 8
	ErrorHardware               Result = 9
	ErrorAPINotImplemented      Result = 11
	ErrorMaxLimitReached        Result = 12
	ErrorNotReady               Result = 13
	ErrorNotCompatible          Result = 14
	ErrorNotInitialized         Result = 15
	ErrorQueueEmpty             Result = 18
	ErrorInvalidKind            Result = 21
	ErrorDisabled               Result = 23
	ErrorNotSupported           Result = 27
	ErrorInsufficientPrivileges Result = 35
	ErrorUnknown                Result = 999
)

var resultNames = map[Result]string{
	0: "CUPTI_SUCCESS", 1: "CUPTI_ERROR_INVALID_PARAMETER", 2: "CUPTI_ERROR_INVALID_DEVICE",
	3: "CUPTI_ERROR_INVALID_CONTEXT", 4: "CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID",
	5: "CUPTI_ERROR_INVALID_EVENT_ID", 6: "CUPTI_ERROR_INVALID_EVENT_NAME",
	7: "CUPTI_ERROR_INVALID_OPERATION", 8: "CUPTI_ERROR_OUT_OF_MEMORY", 9: "CUPTI_ERROR_HARDWARE",
	10: "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT", 11: "CUPTI_ERROR_API_NOT_IMPLEMENTED",
	12: "CUPTI_ERROR_MAX_LIMIT_REACHED", 13: "CUPTI_ERROR_NOT_READY", 14: "CUPTI_ERROR_NOT_COMPATIBLE",
	15: "CUPTI_ERROR_NOT_INITIALIZED", 16: "CUPTI_ERROR_INVALID_METRIC_ID",
	17: "CUPTI_ERROR_INVALID_METRIC_NAME", 18: "CUPTI_ERROR_QUEUE_EMPTY",
	19: "CUPTI_ERROR_INVALID_HANDLE", 20: "CUPTI_ERROR_INVALID_STREAM", 21: "CUPTI_ERROR_INVALID_KIND",
	22: "CUPTI_ERROR_INVALID_EVENT_VALUE", 23: "CUPTI_ERROR_DISABLED", 24: "CUPTI_ERROR_INVALID_MODULE",
	25: "CUPTI_ERROR_INVALID_METRIC_VALUE", 26: "CUPTI_ERROR_HARDWARE_BUSY",
	27: "CUPTI_ERROR_NOT_SUPPORTED", 28: "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED",
	29: "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE",
	30: "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES",
	31: "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS", 32: "CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED",
	33: "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED", 34: "CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE",
	35: "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", 36: "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED",
	37: "CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE", 38: "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED",
	39: "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
	40: "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES",
	41: "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED", 42: "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED",
	43: "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED", 44: "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED",
	45: "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED", 46: "CUPTI_ERROR_INVALID_CHIP_NAME",
	999: "CUPTI_ERROR_UNKNOWN",
}

// String returns the enumerator name, e.g. "CUPTI_ERROR_INVALID_KIND";
// codes missing from the package's table are named by the loaded
// library's cuptiGetResultString, or as "CUPTI_ERROR_<n>".
func (r Result) String() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	if n := libResultName(r); n != "" {
		return n
	}
	return fmt.Sprintf("CUPTI_ERROR_%d", int32(r))
}

// Error is a failed CUPTI call, e.g.
// "cuptiActivityEnable: CUPTI_ERROR_NOT_COMPATIBLE".
type Error struct {
	Func   string
	Result Result
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Func + ": " + e.Result.String() }

// ResultOf extracts the CUPTI result from err, reporting whether err
// wraps an *Error.
func ResultOf(err error) (Result, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Result, true
	}
	return 0, false
}
