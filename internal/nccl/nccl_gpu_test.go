package nccl_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nccl"
)

// Tests named TestGPU* need a CUDA device and libnccl.so.2. They skip
// without them, unless KREPLAY_REQUIRE_GPU=1 makes that a failure. Tests
// that need two GPUs skip on a one-GPU machine in any case (the two-GPU
// run is a separate job).

func requireNCCL(t *testing.T, gpus int) []*cuda.Context {
	t.Helper()
	cudatest.RequireDevices(t, gpus, nccl.Load)
	v, _ := nccl.Version()
	t.Logf("NCCL %s (%s), %s=%s", nccl.VersionString(v), nccl.Path(), nccl.NVLSEnv, "0")
	ctxs := make([]*cuda.Context, gpus)
	for i := range ctxs {
		dev, err := cuda.DeviceGet(i)
		if err != nil {
			t.Fatal(err)
		}
		if ctxs[i], err = dev.RetainPrimaryContext(); err != nil {
			t.Fatal(err)
		}
		ctx := ctxs[i]
		t.Cleanup(func() { ctx.Release() })
	}
	return ctxs
}

// rankBufs are one rank's device buffers and stream.
type rankBufs struct {
	ctx        *cuda.Context
	s          *cuda.Stream
	send, recv cuda.DevicePtr
	in         []byte
}

func newRankBufs(t *testing.T, ctx *cuda.Context, n int64, seed uint64) *rankBufs {
	t.Helper()
	r := &rankBufs{ctx: ctx}
	err := ctx.Do(func() error {
		var err error
		if r.s, err = cuda.NewStream(); err != nil {
			return err
		}
		if r.send, err = cuda.MemAlloc(int(2 * n)); err != nil {
			return err
		}
		if r.recv, err = cuda.MemAlloc(int(2 * n)); err != nil {
			return err
		}
		if err := launch.FillRandom(r.send, 2*n, "f16", seed, r.s); err != nil {
			return err
		}
		r.in = make([]byte, 2*n)
		return cuda.CopyDtoH(r.in, r.send, r.s)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx.Do(func() error {
			r.send.Free()
			r.recv.Free()
			return r.s.Destroy()
		})
	})
	return r
}

// clearRecv zeroes the receive buffer, so that a collective that did
// nothing cannot pass.
func (r *rankBufs) clearRecv(t *testing.T) {
	t.Helper()
	if err := r.ctx.Do(func() error {
		if err := cuda.MemsetD8Async(r.recv, 0, len(r.in), r.s); err != nil {
			return err
		}
		return r.s.Synchronize()
	}); err != nil {
		t.Fatal(err)
	}
}

func (r *rankBufs) out(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, len(r.in))
	if err := r.ctx.Do(func() error {
		if err := r.s.Synchronize(); err != nil {
			return err
		}
		return cuda.CopyDtoH(b, r.recv, r.s)
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// A one-rank communicator from ncclCommInitAll: every collective over one
// rank gives its input back, out of place into a zeroed buffer.
func TestGPUOneRankCollectives(t *testing.T) {
	ctxs := requireNCCL(t, 1)
	const n = 1<<20 + 3 // f16 elements, not a multiple of anything NCCL likes
	r := newRankBufs(t, ctxs[0], n, 7)
	var comms []*nccl.Comm
	if err := ctxs[0].Do(func() error {
		var err error
		comms, err = nccl.CommInitAll([]int{0})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c := comms[0]
	defer func() {
		if err := ctxs[0].Do(c.Destroy); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	}()
	if cnt, err := c.Count(); err != nil || cnt != 1 {
		t.Errorf("Count = %d, %v", cnt, err)
	}
	if dev, err := c.CuDevice(); err != nil || dev != 0 {
		t.Errorf("CuDevice = %d, %v", dev, err)
	}
	if rank, err := c.UserRank(); err != nil || rank != 0 {
		t.Errorf("UserRank = %d, %v", rank, err)
	}
	h := func() uintptr { return uintptr(r.send) }
	calls := []struct {
		name string
		call func() error
	}{
		{"AllReduce", func() error { return c.AllReduce(h(), uintptr(r.recv), n, nccl.Float16, nccl.Sum, r.s.Handle()) }},
		{"AllGather", func() error { return c.AllGather(h(), uintptr(r.recv), n, nccl.Float16, r.s.Handle()) }},
		{"ReduceScatter", func() error { return c.ReduceScatter(h(), uintptr(r.recv), n, nccl.Float16, nccl.Sum, r.s.Handle()) }},
		{"Broadcast", func() error { return c.Broadcast(h(), uintptr(r.recv), n, nccl.Float16, 0, r.s.Handle()) }},
	}
	for _, call := range calls {
		r.clearRecv(t)
		if err := ctxs[0].Do(call.call); err != nil {
			t.Errorf("%s: %v", call.name, err)
			continue
		}
		if got := r.out(t); !bytes.Equal(got, r.in) {
			i := 0
			for i < len(got) && got[i] == r.in[i] {
				i++
			}
			t.Errorf("%s over one rank: output differs from the input at byte %d of %d", call.name, i, len(got))
		}
	}
	// An error names the call and carries NCCL's text.
	err := ctxs[0].Do(func() error {
		return c.AllReduce(uintptr(r.send), uintptr(r.recv), n, nccl.DataType(99), nccl.Sum, r.s.Handle())
	})
	if err == nil {
		t.Error("AllReduce of datatype 99 succeeded")
	} else if res, ok := nccl.ResultOf(err); !ok || res != nccl.InvalidArgument {
		t.Errorf("bad datatype: %v (result %v)", err, res)
	} else {
		t.Logf("bad datatype: %v", err)
	}
}

func halves(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = launch.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

// Two ranks driven from one thread, as ncclCommInitAll's communicators
// are meant to be: the all-reduces inside ncclGroupStart/End, each on its
// own device and stream. Every rank receives the sum of the inputs.
func TestGPUTwoRankAllReduceGrouped(t *testing.T) {
	ctxs := requireNCCL(t, 2)
	const n = 1<<20 + 3
	ranks := []*rankBufs{newRankBufs(t, ctxs[0], n, 11), newRankBufs(t, ctxs[1], n, 12)}
	for _, r := range ranks {
		r.clearRecv(t)
	}
	var comms []*nccl.Comm
	err := ctxs[0].Do(func() error {
		var err error
		if comms, err = nccl.CommInitAll([]int{0, 1}); err != nil {
			return err
		}
		if err := nccl.GroupStart(); err != nil {
			return err
		}
		for i, r := range ranks {
			if err := r.ctx.Do(func() error {
				return comms[i].AllReduce(uintptr(r.send), uintptr(r.recv), n, nccl.Float16, nccl.Sum, r.s.Handle())
			}); err != nil {
				nccl.GroupEnd()
				return fmt.Errorf("rank %d: %w", i, err)
			}
		}
		return nccl.GroupEnd()
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := halves(ranks[0].in), halves(ranks[1].in)
	for rank, r := range ranks {
		got := halves(r.out(t))
		bad := 0
		for i := range got {
			want := launch.F16ToF32(launch.F32ToF16(a[i] + b[i]))
			if math.Abs(float64(got[i]-want)) > 1e-3*math.Abs(float64(want))+1e-3 {
				if bad < 5 {
					t.Errorf("rank %d element %d: %v + %v = %v, got %v", rank, i, a[i], b[i], want, got[i])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("rank %d: %d of %d elements wrong", rank, bad, len(got))
		}
	}
	// Destroy the ranks from one thread, as they were created.
	if err := ctxs[0].Do(func() error {
		for _, c := range comms {
			if err := c.Destroy(); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}
