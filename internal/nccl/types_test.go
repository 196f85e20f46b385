package nccl

import (
	"errors"
	"fmt"
	"testing"
)

// The enumerations as nccl.h (NCCL 2.2x) declares them, transcribed
// separately from the constants so that a slip in either shows here.
func TestEnumValues(t *testing.T) {
	dtypes := []struct {
		t    DataType
		v    int32
		name string
		size int
	}{
		{Int8, 0, "ncclInt8", 1}, {Uint8, 1, "ncclUint8", 1}, {Int32, 2, "ncclInt32", 4},
		{Uint32, 3, "ncclUint32", 4}, {Int64, 4, "ncclInt64", 8}, {Uint64, 5, "ncclUint64", 8},
		{Float16, 6, "ncclFloat16", 2}, {Float32, 7, "ncclFloat32", 4}, {Float64, 8, "ncclFloat64", 8},
		{Bfloat16, 9, "ncclBfloat16", 2}, {Float8e4m3, 10, "ncclFloat8e4m3", 1}, {Float8e5m2, 11, "ncclFloat8e5m2", 1},
	}
	for _, d := range dtypes {
		if int32(d.t) != d.v || d.t.String() != d.name || d.t.Size() != d.size {
			t.Errorf("%s: value %d size %d, want %d size %d", d.t, int32(d.t), d.t.Size(), d.v, d.size)
		}
	}
	ops := []struct {
		o    RedOp
		v    int32
		name string
	}{{Sum, 0, "ncclSum"}, {Prod, 1, "ncclProd"}, {Max, 2, "ncclMax"}, {Min, 3, "ncclMin"}, {Avg, 4, "ncclAvg"}}
	for _, o := range ops {
		if int32(o.o) != o.v || o.o.String() != o.name {
			t.Errorf("%s = %d, want %s = %d", o.o, int32(o.o), o.name, o.v)
		}
	}
	results := []struct {
		r    Result
		v    int32
		name string
	}{
		{Success, 0, "ncclSuccess"}, {UnhandledCudaError, 1, "ncclUnhandledCudaError"}, {SystemError, 2, "ncclSystemError"},
		{InternalError, 3, "ncclInternalError"}, {InvalidArgument, 4, "ncclInvalidArgument"},
		{InvalidUsage, 5, "ncclInvalidUsage"}, {RemoteError, 6, "ncclRemoteError"},
		{InProgress, 7, "ncclInProgress"}, {Timeout, 8, "ncclTimeout"},
	}
	for _, r := range results {
		if int32(r.r) != r.v || r.r.String() != r.name {
			t.Errorf("%s = %d, want %s = %d", r.r, int32(r.r), r.name, r.v)
		}
	}
	if s := DataType(42).String(); s != "ncclDataType(42)" {
		t.Errorf("unknown dtype: %q", s)
	}
	if DataType(42).Size() != 0 {
		t.Error("unknown dtype has a size")
	}
	if s := RedOp(7).String(); s != "ncclRedOp(7)" {
		t.Errorf("unknown op: %q", s)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Func: "ncclAllReduce", Result: UnhandledCudaError,
		Text: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"}
	if got, want := e.Error(), "ncclAllReduce: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e.Last = "Cuda failure 'invalid argument'"
	if got, want := e.Error(), "ncclAllReduce: unhandled cuda error (run with NCCL_DEBUG=INFO for details) [last error: Cuda failure 'invalid argument']"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if Path() == "" {
		bare := &Error{Func: "ncclCommInitAll", Result: InvalidArgument}
		if got := bare.Error(); got != "ncclCommInitAll: invalid argument" {
			t.Errorf("without a library: %q", got)
		}
	}
	wrapped := fmt.Errorf("rank 1: %w", e)
	if r, ok := ResultOf(wrapped); !ok || r != UnhandledCudaError {
		t.Errorf("ResultOf = %v, %v", r, ok)
	}
	if _, ok := ResultOf(errors.New("other")); ok {
		t.Error("ResultOf found a result in a plain error")
	}
	if s := Result(99).Description(); s == "" {
		t.Error("no description for an unknown result")
	}
}

func TestVersionCode(t *testing.T) {
	for _, c := range []struct {
		major, minor, patch, code int
		s                         string
	}{
		{2, 8, 4, 2804, "2.8.4"}, {2, 9, 6, 20906, "2.9.6"}, {2, 21, 5, 22105, "2.21.5"}, {2, 27, 3, 22703, "2.27.3"},
	} {
		if got := VersionCode(c.major, c.minor, c.patch); got != c.code {
			t.Errorf("VersionCode(%d,%d,%d) = %d, want %d", c.major, c.minor, c.patch, got, c.code)
		}
		if got := VersionString(c.code); got != c.s {
			t.Errorf("VersionString(%d) = %q, want %q", c.code, got, c.s)
		}
	}
}
