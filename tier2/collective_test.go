package tier2

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/signatures"
)

// The bus-bandwidth factors of nccl-tests: allreduce 2(n-1)/n, allgather
// and reduce_scatter (n-1)/n, broadcast 1.
func TestBusBytes(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		op    CollectiveOp
		bytes int64
		ranks int
		want  float64
	}{
		{AllReduce, 16 * mib, 2, 16 * mib},         // 2(2-1)/2 = 1
		{AllReduce, 16 * mib, 8, 28 * mib},         // 2*7/8 = 1.75
		{AllReduce, 16 * mib, 4, 24 * mib},         // 2*3/4 = 1.5
		{AllReduce, 16 * mib, 1, 0},                // nothing crosses a link
		{AllGather, 16 * mib, 2, 8 * mib},          // 1/2
		{AllGather, 16 * mib, 8, 14 * mib},         // 7/8
		{ReduceScatter, 16 * mib, 4, 12 * mib},     // 3/4
		{ReduceScatter, 16 * mib, 1, 0},            //
		{Broadcast, 16 * mib, 8, 16 * mib},         // 1
		{Broadcast, 16 * mib, 1, 16 * mib},         //
		{CollectiveOp("alltoall"), 16 * mib, 8, 0}, // unknown
		{AllReduce, 16 * mib, 0, 0},                // no ranks
	} {
		if got := BusBytes(c.op, c.bytes, c.ranks); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("BusBytes(%s, %d, %d) = %v, want %v", c.op, c.bytes, c.ranks, got, c.want)
		}
	}
	// The traced TP all-reduce: 8388608 halves over 2 ranks is 16 MiB of
	// bus traffic; at 100 µs that is 167.8 GB/s.
	if bw := BusBytes(AllReduce, 8388608*2, 2) / 100e3; math.Abs(bw-167.77216) > 1e-6 {
		t.Errorf("bus bandwidth %v GB/s", bw)
	}
}

func TestParseCollectiveOp(t *testing.T) {
	for in, want := range map[string]CollectiveOp{
		"allreduce": AllReduce, "all_reduce": AllReduce, "AllReduce": AllReduce, "allreduce_coalesced": AllReduce,
		"allgather": AllGather, "_allgather_base": AllGather, "all_gather_into_tensor_coalesced": AllGather,
		"allgather_into_tensor_coalesced": AllGather, "all_gather": AllGather,
		"reduce_scatter": ReduceScatter, "reducescatter": ReduceScatter, "_reduce_scatter_base": ReduceScatter,
		"reduce_scatter_tensor_coalesced": ReduceScatter, "reduce_scatter_tensor": ReduceScatter,
		"broadcast": Broadcast, "Broadcast": Broadcast,
	} {
		if got, err := ParseCollectiveOp(in); err != nil || got != want {
			t.Errorf("ParseCollectiveOp(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "alltoall", "send", "reduce", "gather"} {
		if _, err := ParseCollectiveOp(bad); err == nil {
			t.Errorf("ParseCollectiveOp(%q) succeeded", bad)
		}
	}
	for op, call := range map[CollectiveOp]string{AllReduce: "ncclAllReduce", AllGather: "ncclAllGather",
		ReduceScatter: "ncclReduceScatter", Broadcast: "ncclBroadcast"} {
		if op.Call() != call {
			t.Errorf("%s.Call() = %q", op, op.Call())
		}
	}
}

func TestNCCLTypes(t *testing.T) {
	for in, want := range map[string]nccl.DataType{
		"f16": nccl.Float16, "bf16": nccl.Bfloat16, "f32": nccl.Float32, "f64": nccl.Float64,
		"i8": nccl.Int8, "u8": nccl.Uint8, "bool": nccl.Uint8, "i32": nccl.Int32, "u32": nccl.Uint32,
		"i64": nccl.Int64, "u64": nccl.Uint64, "f8e4m3": nccl.Float8e4m3, "f8e5m2": nccl.Float8e5m2,
	} {
		got, err := ncclDataType(in)
		if err != nil || got != want {
			t.Errorf("ncclDataType(%q) = %v, %v; want %v", in, got, err, want)
		}
		// The random fill covers the element size.
		if fill := fillDType(got); signatures.DTypeSize(fill) != int64(got.Size()) && fill != "u8" {
			t.Errorf("%s fills as %s", got, fill)
		}
	}
	if _, err := ncclDataType("c64"); err == nil {
		t.Error("c64 has an NCCL type")
	}
	for in, want := range map[string]nccl.RedOp{"": nccl.Sum, "Sum": nccl.Sum, "Prod": nccl.Prod,
		"MinMax": nccl.Max, "Max": nccl.Max, "Min": nccl.Min, "PreMulSum": nccl.Avg, "SumPostDiv": nccl.Avg, "avg": nccl.Avg} {
		if got, err := ncclRedOp(in); err != nil || got != want {
			t.Errorf("ncclRedOp(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ncclRedOp("Xor"); err == nil {
		t.Error("Xor has an NCCL reduction")
	}
}

func collSig(op, dtype string) *signatures.Signature {
	return &signatures.Signature{ID: "c0ffee000001", Class: signatures.ClassCollective, Tier: signatures.TierLibrary,
		Collective: &signatures.Collective{Op: op, Nelems: 8388608, OutNelems: 8388608, DType: dtype, Ranks: 2, Reduction: "Sum"}}
}

// NewCollective refuses what it cannot replay before it touches a GPU.
func TestNewCollectiveErrors(t *testing.T) {
	gemm := &signatures.Signature{ID: "g", Class: signatures.ClassGEMM}
	if _, err := NewCollective(gemm, nil, launch.Options{}, nil); !errors.Is(err, ErrNotCollective) {
		t.Errorf("GEMM: %v", err)
	}
	un := collSig("allreduce", "f16")
	un.Unreplayable = "unreplayable: no dtype"
	if _, err := NewCollective(un, nil, launch.Options{}, nil); err == nil || !strings.Contains(err.Error(), "no dtype") {
		t.Errorf("unreplayable: %v", err)
	}
	bare := collSig("allreduce", "f16")
	bare.Collective = nil
	if _, err := NewCollective(bare, nil, launch.Options{}, nil); err == nil {
		t.Error("no parameters: no error")
	}
	if _, err := NewCollective(collSig("alltoall", "f16"), nil, launch.Options{}, nil); err == nil || !strings.Contains(err.Error(), "alltoall") {
		t.Errorf("alltoall: %v", err)
	}
	if _, err := NewCollective(collSig("allreduce", "c128"), nil, launch.Options{}, nil); err == nil || !strings.Contains(err.Error(), "c128") {
		t.Errorf("c128: %v", err)
	}
	// A nil communicator is refused by the first NCCL query.
	if _, err := NewCollective(collSig("allreduce", "f16"), nil, launch.Options{}, nil); !errors.Is(err, nccl.ErrNilComm) {
		t.Errorf("nil communicator: %v", err)
	}
}
