package tier2

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kreplay/kreplay/gpu"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/signatures"
)

// ErrNotCollective is returned for signatures that are not NCCL
// collectives.
var ErrNotCollective = errors.New("not an NCCL collective")

// CollectiveOp is a collective kreplay replays with NCCL.
type CollectiveOp string

// The collectives NCCL replays, named as signatures.Collective names them.
const (
	AllReduce     CollectiveOp = "allreduce"
	AllGather     CollectiveOp = "allgather"
	ReduceScatter CollectiveOp = "reduce_scatter"
	Broadcast     CollectiveOp = "broadcast"
)

// Call returns the NCCL function that runs the collective.
func (op CollectiveOp) Call() string {
	switch op {
	case AllReduce:
		return "ncclAllReduce"
	case AllGather:
		return "ncclAllGather"
	case ReduceScatter:
		return "ncclReduceScatter"
	case Broadcast:
		return "ncclBroadcast"
	}
	return "nccl(" + string(op) + ")"
}

// ParseCollectiveOp reads the collective name of a signature: PyTorch's
// "Collective name" (allreduce, _allgather_base,
// all_gather_into_tensor_coalesced, reduce_scatter_tensor, ...) or the op
// of an NCCL kernel name as the importer lowercases it (allgather,
// reducescatter). Case, underscores and the suffixes base, coalesced,
// into_tensor and tensor do not matter.
func ParseCollectiveOp(name string) (CollectiveOp, error) {
	s := strings.ReplaceAll(strings.ToLower(name), "_", "")
	for _, suffix := range []string{"coalesced", "base", "intotensor", "tensor"} {
		s = strings.TrimSuffix(s, suffix)
	}
	switch s {
	case "allreduce":
		return AllReduce, nil
	case "allgather":
		return AllGather, nil
	case "reducescatter":
		return ReduceScatter, nil
	case "broadcast", "bcast":
		return Broadcast, nil
	}
	return "", fmt.Errorf("collective %q has no NCCL replay (allreduce, allgather, reduce_scatter and broadcast do)", name)
}

// BusFactor is the factor between a collective's algorithm bandwidth and
// its bus bandwidth over ranks ranks, as nccl-tests defines them
// (doc/PERFORMANCE.md there):
//
//	allreduce       busBW = algBW * 2(n-1)/n
//	allgather       busBW = algBW * (n-1)/n
//	reduce_scatter  busBW = algBW * (n-1)/n
//	broadcast       busBW = algBW
//
// The bus bandwidth is what each rank's links carry, comparable with the
// hardware's peak whatever the rank count; for one rank it is 0 except for
// broadcast, since nothing crosses a link.
func BusFactor(op CollectiveOp, ranks int) float64 {
	if ranks < 1 {
		return 0
	}
	n := float64(ranks)
	switch op {
	case AllReduce:
		return 2 * (n - 1) / n
	case AllGather, ReduceScatter:
		return (n - 1) / n
	case Broadcast:
		return 1
	}
	return 0
}

// BusBytes returns the bytes a collective's bus bandwidth counts: bytes
// times BusFactor(op, ranks). bytes is the size nccl-tests divides by the
// time to get the algorithm bandwidth: the buffer of an allreduce or a
// broadcast, the gathered output of an allgather (ranks times each rank's
// input), the input of a reduce_scatter (ranks times each rank's output).
// Bus bandwidth is BusBytes over the time of one call.
func BusBytes(op CollectiveOp, bytes int64, ranks int) float64 {
	return float64(bytes) * BusFactor(op, ranks)
}

// ncclDataType maps kreplay's short dtype names (signatures.DType) to
// NCCL's; bool travels as ncclUint8, as PyTorch sends it.
func ncclDataType(dtype string) (nccl.DataType, error) {
	switch dtype {
	case "i8":
		return nccl.Int8, nil
	case "u8", "bool":
		return nccl.Uint8, nil
	case "i32":
		return nccl.Int32, nil
	case "u32":
		return nccl.Uint32, nil
	case "i64":
		return nccl.Int64, nil
	case "u64":
		return nccl.Uint64, nil
	case "f16":
		return nccl.Float16, nil
	case "f32":
		return nccl.Float32, nil
	case "f64":
		return nccl.Float64, nil
	case "bf16":
		return nccl.Bfloat16, nil
	case "f8e4m3":
		return nccl.Float8e4m3, nil
	case "f8e5m2":
		return nccl.Float8e5m2, nil
	}
	return 0, fmt.Errorf("dtype %q has no NCCL data type", dtype)
}

// fillDType is the dtype launch.FillRandom fills a buffer of t with.
func fillDType(t nccl.DataType) string {
	switch t {
	case nccl.Float16:
		return "f16"
	case nccl.Bfloat16:
		return "bf16"
	case nccl.Float32:
		return "f32"
	case nccl.Float64:
		return "f64"
	case nccl.Int32, nccl.Uint32:
		return "i32"
	case nccl.Int64, nccl.Uint64:
		return "i64"
	}
	return "u8"
}

// ncclRedOp maps the reduction a signature names (the NCCL kernel's, e.g.
// "Sum" in ncclDevKernel_AllReduce_Sum_f16_RING_LL) to an ncclRedOp_t.
// An empty name is Sum. NCCL names one kernel MinMax for both max and min,
// so MinMax replays as Max; an average runs as PreMulSum or SumPostDiv
// kernels, which replay as ncclAvg.
func ncclRedOp(name string) (nccl.RedOp, error) {
	switch strings.ToLower(name) {
	case "", "sum":
		return nccl.Sum, nil
	case "prod", "product":
		return nccl.Prod, nil
	case "max", "minmax":
		return nccl.Max, nil
	case "min":
		return nccl.Min, nil
	case "avg", "premulsum", "sumpostdiv":
		return nccl.Avg, nil
	}
	return 0, fmt.Errorf("reduction %q has no NCCL replay", name)
}

// collSet is one buffer set of a collective: send and receive buffers,
// the same buffer for an in-place call.
type collSet struct{ send, recv cuda.DevicePtr }

// Collective is an NCCL collective signature made launchable for one rank
// of a communicator. Every rank of the communicator builds its own, and
// the ranks must launch together: NCCL waits for all of them.
type Collective struct {
	c       signatures.Collective
	op      CollectiveOp
	dt      nccl.DataType
	red     nccl.RedOp
	comm    *nccl.Comm
	ranks   int
	rank    int
	inPlace bool
	// sendCount and recvCount are the elements of the send and receive
	// buffers; count is what the NCCL call takes (count, sendcount or
	// recvcount).
	sendCount, recvCount, count int64
	sets                        []collSet
	capturable                  bool
}

var _ launch.Kernel = (*Collective)(nil)

// NewCollective allocates one rank's buffers for a collective signature
// (random data) on the device whose context is current, for the
// communicator rank comm. It makes no NCCL call that waits for other
// ranks. The buffers follow the traced per-rank sizes, which keep their
// meaning whatever the communicator's rank count:
//
//   - allreduce: Nelems elements, reduced in place (PyTorch's all_reduce);
//   - broadcast: Nelems elements from rank 0, in place;
//   - both out of place on a one-rank communicator, where NCCL does
//     nothing in place and copies out of place;
//   - allgather: each rank sends Nelems and receives ranks*Nelems;
//   - reduce_scatter: each rank receives OutNelems (when the trace gives
//     none, Nelems over the traced rank count) and sends ranks times that.
//
// A coalesced collective replays as one call over its total elements.
func NewCollective(sig *signatures.Signature, comm *gpu.Comm, opt gpu.Options, s *gpu.Stream) (k *Collective, err error) {
	if sig.Class != signatures.ClassCollective {
		return nil, fmt.Errorf("%s: %w", sig.ID, ErrNotCollective)
	}
	if sig.Unreplayable != "" {
		return nil, errors.New(sig.Unreplayable)
	}
	if sig.Collective == nil {
		return nil, fmt.Errorf("%s: collective signature without parameters", sig.ID)
	}
	c := *sig.Collective
	k = &Collective{c: c, comm: comm}
	if k.op, err = ParseCollectiveOp(c.Op); err != nil {
		return nil, err
	}
	if k.dt, err = ncclDataType(c.DType); err != nil {
		return nil, err
	}
	if k.op == AllReduce || k.op == ReduceScatter {
		if k.red, err = ncclRedOp(c.Reduction); err != nil {
			return nil, err
		}
	}
	if k.ranks, err = comm.Count(); err != nil {
		return nil, err
	}
	if k.rank, err = comm.UserRank(); err != nil {
		return nil, err
	}
	if c.Nelems <= 0 {
		return nil, fmt.Errorf("%s: collective of %d elements", sig.ID, c.Nelems)
	}
	n := int64(k.ranks)
	switch k.op {
	case AllReduce, Broadcast:
		// Over one rank NCCL only copies send to recv, and in place does
		// nothing at all: a one-rank replay runs out of place to time the copy.
		k.sendCount, k.recvCount, k.count, k.inPlace = c.Nelems, c.Nelems, c.Nelems, k.ranks > 1
	case AllGather:
		k.sendCount, k.recvCount, k.count = c.Nelems, c.Nelems*n, c.Nelems
	case ReduceScatter:
		per := c.OutNelems
		if per <= 0 || per == c.Nelems && c.Ranks > 1 {
			per = c.Nelems / max(c.Ranks, 1)
		}
		if per <= 0 {
			return nil, fmt.Errorf("%s: reduce_scatter of %d elements over %d ranks", sig.ID, c.Nelems, c.Ranks)
		}
		k.sendCount, k.recvCount, k.count = per*n, per, per
	}
	if v, err := nccl.Version(); err == nil {
		// NCCL calls can be captured in CUDA graphs from NCCL 2.9 on.
		k.capturable = v >= nccl.VersionCode(2, 9, 0)
	}
	built := k
	defer func() {
		if err != nil {
			built.Close()
		}
	}()
	sets := max(opt.Sets, 1)
	if need := int64(sets) * k.Footprint(); opt.FreeBytes > 0 && need > opt.FreeBytes {
		return nil, fmt.Errorf("needs %d bytes of device memory for %d buffer sets, %d available", need, sets, opt.FreeBytes)
	}
	elem := int64(k.dt.Size())
	fill := fillDType(k.dt)
	for i := 0; i < sets; i++ {
		k.sets = append(k.sets, collSet{})
		cur := &k.sets[len(k.sets)-1]
		if cur.send, err = cuda.MemAlloc(int(k.sendCount * elem)); err != nil {
			return nil, err
		}
		seed := opt.Seed + uint64(i)*0x9e3779b9 + uint64(k.rank)*0x85ebca6b
		if err = launch.FillRandom(cur.send, k.sendCount*elem, fill, seed, s); err != nil {
			return nil, err
		}
		if k.inPlace {
			cur.recv = cur.send
			continue
		}
		if cur.recv, err = cuda.MemAlloc(int(k.recvCount * elem)); err != nil {
			return nil, err
		}
		if err = launch.FillRandom(cur.recv, k.recvCount*elem, fill, seed+1, s); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Op returns the collective.
func (k *Collective) Op() CollectiveOp { return k.op }

// DataType returns the NCCL name of the elements' data type
// ("ncclFloat16", ...).
func (k *Collective) DataType() string { return k.dt.String() }

// RedOp returns the NCCL name of the reduction (allreduce and
// reduce_scatter).
func (k *Collective) RedOp() string { return k.red.String() }

// Ranks returns the communicator's rank count; Rank this kernel's rank.
func (k *Collective) Ranks() int { return k.ranks }

// Rank returns the communicator rank this kernel launches for.
func (k *Collective) Rank() int { return k.rank }

// InPlace reports whether the call reads and writes one buffer.
func (k *Collective) InPlace() bool { return k.inPlace }

// Counts returns the elements of the send and receive buffers.
func (k *Collective) Counts() (send, recv int64) { return k.sendCount, k.recvCount }

// Buffers returns buffer set set's send and receive buffers (the same
// buffer for an in-place call).
func (k *Collective) Buffers(set int) (send, recv gpu.DevicePtr) {
	b := k.sets[set]
	return b.send, b.recv
}

// Launch enqueues this rank's NCCL call on s using buffer set set. It
// returns once the call is enqueued; the collective itself completes on
// the GPU only when every rank has launched it.
func (k *Collective) Launch(s *gpu.Stream, set int) error {
	b := k.sets[set]
	send, recv, st := uintptr(b.send), uintptr(b.recv), s.Handle()
	switch k.op {
	case AllReduce:
		return k.comm.AllReduce(send, recv, int(k.count), k.dt, k.red, st)
	case AllGather:
		return k.comm.AllGather(send, recv, int(k.count), k.dt, st)
	case ReduceScatter:
		return k.comm.ReduceScatter(send, recv, int(k.count), k.dt, k.red, st)
	case Broadcast:
		return k.comm.Broadcast(send, recv, int(k.count), k.dt, 0, st)
	}
	return fmt.Errorf("collective %q", k.op)
}

// Sets returns the number of buffer sets.
func (k *Collective) Sets() int { return len(k.sets) }

// Footprint is this rank's buffer memory for one buffer set.
func (k *Collective) Footprint() int64 {
	elem := int64(k.dt.Size())
	if k.inPlace {
		return k.sendCount * elem
	}
	return (k.sendCount + k.recvCount) * elem
}

// AlgBytes is the size the algorithm bandwidth counts (see BusBytes): the
// buffer of an allreduce or broadcast, the gathered output of an
// allgather, the input of a reduce_scatter.
func (k *Collective) AlgBytes() int64 {
	elem := int64(k.dt.Size())
	switch k.op {
	case AllGather:
		return k.recvCount * elem
	case ReduceScatter:
		return k.sendCount * elem
	}
	return k.count * elem
}

// BusBytes is AlgBytes times the bus factor for the communicator's ranks.
func (k *Collective) BusBytes() float64 { return BusBytes(k.op, k.AlgBytes(), k.ranks) }

// Work counts the bus bytes (rounded), so that a throughput figure from
// it is the bus bandwidth, and no FLOPs.
func (k *Collective) Work() gpu.Work {
	return launch.Work{Bytes: int64(k.BusBytes() + 0.5)}
}

// Capturable is true from NCCL 2.9 on, which supports capturing its calls
// in CUDA graphs.
func (k *Collective) Capturable() bool { return k.capturable }

// Close frees the buffers; the communicator is the caller's.
func (k *Collective) Close() error {
	var errs []error
	for _, b := range k.sets {
		if b.send != 0 {
			errs = append(errs, b.send.Free())
		}
		if b.recv != 0 && b.recv != b.send {
			errs = append(errs, b.recv.Free())
		}
	}
	k.sets = nil
	return errors.Join(errs...)
}
