package nccl

/*
#include "nccl_shim.h"
*/
import "C"

import "fmt"

// UniqueIDBytes is NCCL_UNIQUE_ID_BYTES, the size of an ncclUniqueId.
const UniqueIDBytes = 128

// uniqueIDSize is the size of the C declaration, which tests compare with
// UniqueIDBytes and with unsafe.Sizeof(UniqueID{}).
const uniqueIDSize = C.sizeof_kr_ncclUniqueId

// UniqueID is an ncclUniqueId: the opaque token that ranks of one
// communicator share to find each other (ncclGetUniqueId on one rank,
// passed to every rank's ncclCommInitRank).
type UniqueID [UniqueIDBytes]byte

// DataType is an ncclDataType_t.
type DataType int32

// ncclDataType_t values, from nccl.h (NCCL 2.2x; the header probe checks
// them). ncclChar, ncclInt, ncclHalf, ncclFloat and ncclDouble are aliases
// of Int8, Int32, Float16, Float32 and Float64.
const (
	Int8     DataType = 0
	Uint8    DataType = 1
	Int32    DataType = 2
	Uint32   DataType = 3
	Int64    DataType = 4
	Uint64   DataType = 5
	Float16  DataType = 6
	Float32  DataType = 7
	Float64  DataType = 8
	Bfloat16 DataType = 9 // NCCL 2.10 and later (built with CUDA 11+)
	// Float8e4m3 and Float8e5m2: NCCL 2.24 and later.
	Float8e4m3 DataType = 10
	Float8e5m2 DataType = 11
)

var dataTypeInfo = map[DataType]struct {
	name string
	size int
}{
	Int8: {"ncclInt8", 1}, Uint8: {"ncclUint8", 1}, Int32: {"ncclInt32", 4}, Uint32: {"ncclUint32", 4},
	Int64: {"ncclInt64", 8}, Uint64: {"ncclUint64", 8}, Float16: {"ncclFloat16", 2},
	Float32: {"ncclFloat32", 4}, Float64: {"ncclFloat64", 8}, Bfloat16: {"ncclBfloat16", 2},
	Float8e4m3: {"ncclFloat8e4m3", 1}, Float8e5m2: {"ncclFloat8e5m2", 1},
}

// String returns the enumerator name, e.g. "ncclFloat16".
func (t DataType) String() string {
	if i, ok := dataTypeInfo[t]; ok {
		return i.name
	}
	return fmt.Sprintf("ncclDataType(%d)", int32(t))
}

// Size returns the size of one element in bytes (0 for unknown types).
func (t DataType) Size() int { return dataTypeInfo[t].size }

// RedOp is an ncclRedOp_t, a reduction operation.
type RedOp int32

// ncclRedOp_t values, from nccl.h.
const (
	Sum  RedOp = 0
	Prod RedOp = 1
	Max  RedOp = 2
	Min  RedOp = 3
	Avg  RedOp = 4 // NCCL 2.10 and later
)

var redOpNames = map[RedOp]string{Sum: "ncclSum", Prod: "ncclProd", Max: "ncclMax", Min: "ncclMin", Avg: "ncclAvg"}

// String returns the enumerator name, e.g. "ncclSum".
func (o RedOp) String() string {
	if n, ok := redOpNames[o]; ok {
		return n
	}
	return fmt.Sprintf("ncclRedOp(%d)", int32(o))
}

// Result is an ncclResult_t.
type Result int32

// ncclResult_t values, from nccl.h.
const (
	Success            Result = 0
	UnhandledCudaError Result = 1
	SystemError        Result = 2
	InternalError      Result = 3
	InvalidArgument    Result = 4
	InvalidUsage       Result = 5
	RemoteError        Result = 6 // NCCL 2.13 and later
	InProgress         Result = 7 // NCCL 2.14 and later (non-blocking communicators)
	Timeout            Result = 8 // NCCL 2.30 and later
)

var resultInfo = map[Result]struct{ name, text string }{
	Success:            {"ncclSuccess", "no error"},
	UnhandledCudaError: {"ncclUnhandledCudaError", "unhandled cuda error"},
	SystemError:        {"ncclSystemError", "unhandled system error"},
	InternalError:      {"ncclInternalError", "internal error"},
	InvalidArgument:    {"ncclInvalidArgument", "invalid argument"},
	InvalidUsage:       {"ncclInvalidUsage", "invalid usage"},
	RemoteError:        {"ncclRemoteError", "remote process exited or there was a network error"},
	InProgress:         {"ncclInProgress", "NCCL operation in progress"},
	Timeout:            {"ncclTimeout", "operation timed out"},
}

// String returns the enumerator name, e.g. "ncclUnhandledCudaError".
func (r Result) String() string {
	if i, ok := resultInfo[r]; ok {
		return i.name
	}
	return fmt.Sprintf("ncclResult(%d)", int32(r))
}
