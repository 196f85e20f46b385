package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cuda/cudatest"
	"github.com/kreplay/kreplay/internal/gputest"
	"github.com/kreplay/kreplay/internal/launch"
	"github.com/kreplay/kreplay/internal/nccl"
	"github.com/kreplay/kreplay/signatures"
	"github.com/kreplay/kreplay/tier2"
)

// openGroup opens a group of the first gpus GPUs, skipping (or failing
// under KREPLAY_REQUIRE_GPU=1) without CUDA or NCCL. With fewer GPUs than
// gpus it skips even under KREPLAY_REQUIRE_GPU=1: the multi-GPU run is a
// separate job on a machine that has them.
func openGroup(t *testing.T, gpus int) *Group {
	t.Helper()
	cudatest.RequireDevices(t, gpus, nccl.Load)
	idx := make([]int, gpus)
	for i := range idx {
		idx[i] = i
	}
	g, err := OpenGroup(idx...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	})
	v, _ := nccl.Version()
	t.Logf("NCCL %s, GPUs %v (%s)", nccl.VersionString(v), g.Indices(), g.Devices[0].Name)
	return g
}

// tracedAllReduce is the all-reduce of the Llama-7B TP=2 prefill trace:
// f16, 8388608 elements, 2 ranks.
func tracedAllReduce(t *testing.T) *signatures.Signature {
	t.Helper()
	set := embedded(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	for _, s := range set.Signatures {
		if c := s.Collective; c != nil && c.Op == "allreduce" && c.DType == "f16" && c.Nelems == 8388608 {
			return s
		}
	}
	t.Fatal("no f16 all-reduce of 8388608 elements in the TP trace")
	return nil
}

func collectiveSig(op string, nelems, out int64, ranks int64) *signatures.Signature {
	return &signatures.Signature{ID: "c0ffee" + op, Label: op + " test", Class: signatures.ClassCollective,
		Tier: signatures.TierLibrary, Count: 1, Collective: &signatures.Collective{Op: op, Nelems: nelems,
			OutNelems: out, DType: "f16", Ranks: ranks, Reduction: "Sum"}}
}

func readHalves(p cuda.DevicePtr, n int64, s *cuda.Stream) ([]float32, error) {
	b := make([]byte, 2*n)
	if err := cuda.CopyDtoH(b, p, s); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = launch.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out, nil
}

// runOnce builds sig's kernel on every rank, reads the send buffers, runs
// one call on all ranks at once (released by the barrier, one thread per
// rank) and returns each rank's input and output.
func runOnce(t *testing.T, g *Group, sig *signatures.Signature) (in, out [][]float32, ks []*tier2.Collective) {
	t.Helper()
	comms, err := g.Comms()
	if err != nil {
		t.Fatal(err)
	}
	n := g.Size()
	in, out, ks = make([][]float32, n), make([][]float32, n), make([]*tier2.Collective, n)
	t.Cleanup(func() {
		g.onAll(func(rank int, d *Device, _ func() bool) error {
			if ks[rank] != nil {
				return ks[rank].Close()
			}
			return nil
		})
	})
	err = g.onAll(func(rank int, d *Device, release func() bool) error {
		k, err := tier2.NewCollective(sig, comms[rank], launch.Options{Sets: 1, Seed: 99}, d.stream)
		if err != nil {
			return err
		}
		ks[rank] = k
		send, recv := k.Buffers(0)
		sn, rn := k.Counts()
		if !k.InPlace() {
			// A stale receive buffer must not pass for a result.
			if err := cuda.MemsetD8Async(recv, 0, int(2*rn), d.stream); err != nil {
				return err
			}
		}
		if in[rank], err = readHalves(send, sn, d.stream); err != nil {
			return err
		}
		if !release() {
			return errPeerFailed
		}
		if err := k.Launch(d.stream, 0); err != nil {
			return err
		}
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		out[rank], err = readHalves(recv, rn, d.stream)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return in, out, ks
}

// compareHalves checks got against want, each rounded to half precision,
// reporting the first few differences.
func compareHalves(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d elements, want %d", what, len(got), len(want))
		return
	}
	bad := 0
	for i := range got {
		w := launch.F16ToF32(launch.F32ToF16(want[i]))
		if math.Abs(float64(got[i]-w)) > 1e-3*math.Abs(float64(w))+1e-3 {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v", what, i, got[i], w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(got))
	}
}

// One GPU: a one-rank communicator (ncclCommInitAll over one device)
// all-reduces random f16 data into the input itself (the sum over one
// rank), and the traced TP all-reduce is timed through the Group.
func TestGPUGroupOneRank(t *testing.T) {
	g := openGroup(t, 1)
	const n = 1<<20 + 3
	in, out, ks := runOnce(t, g, collectiveSig("allreduce", n, n, 1))
	if ks[0].InPlace() || ks[0].Ranks() != 1 {
		t.Errorf("one-rank all-reduce: in place %v, %d ranks", ks[0].InPlace(), ks[0].Ranks())
	}
	compareHalves(t, "one-rank all-reduce", out[0], in[0])

	sig := tracedAllReduce(t)
	r, err := g.MeasureCollective(sig, quick)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.2f µs per call (±%.1f%%, %d samples x %d, graph %v %s), alg %.1f GB/s, bus %.1f GB/s",
		r.Label, r.MedianNS/1e3, 100*r.RelCI, r.Samples, r.Batch, r.Graph, r.GraphErr, r.AlgGBps, r.BusGBps)
	if r.MedianNS <= 0 || r.Samples < 10 || r.MinNS > r.MedianNS || r.MedianNS > r.MaxNS {
		t.Errorf("result %+v", r.Result)
	}
	if r.Ranks != 1 || r.TracedRanks != 2 || len(r.PerRank) != 1 || r.PerRank[0].MedianNS != r.MedianNS {
		t.Errorf("ranks %d traced %d per rank %+v", r.Ranks, r.TracedRanks, r.PerRank)
	}
	if r.Op != "allreduce" || r.Call != "ncclAllReduce" || r.DType != "ncclFloat16" || r.SendElems != 8388608 {
		t.Errorf("op %s call %s dtype %s elems %d", r.Op, r.Call, r.DType, r.SendElems)
	}
	if r.AlgBytes != 2*8388608 || r.BusBytes != 0 || r.BusGBps != 0 || r.AlgGBps <= 0 {
		t.Errorf("one rank: alg %d B (%.1f GB/s), bus %.0f B (%.1f GB/s)", r.AlgBytes, r.AlgGBps, r.BusBytes, r.BusGBps)
	}
	if v, _ := nccl.Version(); v >= nccl.VersionCode(2, 9, 0) && !r.Graph {
		t.Errorf("NCCL %s but no CUDA graph: %s", nccl.VersionString(v), r.GraphErr)
	}
	// A Device alone still refuses the collective, pointing to Group.
	if _, err := g.Devices[0].Prepare(sig); !errors.Is(err, ErrNotImplemented) || !strings.Contains(err.Error(), "Group") {
		t.Errorf("Device.Prepare of a collective: %v", err)
	}
}

// Two GPUs: each collective, issued by one thread per rank released
// together, gives what NCCL promises on every rank.
func TestGPUGroupTwoRankCorrectness(t *testing.T) {
	g := openGroup(t, 2)
	const n = 1<<20 + 3
	in, out, _ := runOnce(t, g, collectiveSig("allreduce", n, n, 2))
	sum := make([]float32, n)
	for i := range sum {
		sum[i] = in[0][i] + in[1][i]
	}
	for rank := range out {
		compareHalves(t, fmt.Sprintf("all-reduce sum, rank %d", rank), out[rank], sum)
	}

	in, out, _ = runOnce(t, g, collectiveSig("broadcast", n, n, 2))
	for rank := range out {
		compareHalves(t, fmt.Sprintf("broadcast, rank %d", rank), out[rank], in[0])
	}

	in, out, _ = runOnce(t, g, collectiveSig("_allgather_base", n, 2*n, 2))
	gathered := append(append([]float32(nil), in[0]...), in[1]...)
	for rank := range out {
		compareHalves(t, fmt.Sprintf("all-gather, rank %d", rank), out[rank], gathered)
	}

	in, out, _ = runOnce(t, g, collectiveSig("reduce_scatter_tensor", 2*n, n, 2))
	for rank := range out {
		block := make([]float32, n)
		for i := range block {
			block[i] = in[0][rank*n+i] + in[1][rank*n+i]
		}
		compareHalves(t, fmt.Sprintf("reduce-scatter, rank %d", rank), out[rank], block)
	}
}

// Two GPUs: the traced tensor-parallel all-reduce (f16, 8388608 elements)
// measured across both, with its bus bandwidth.
func TestGPUGroupMeasureTPAllReduce(t *testing.T) {
	g := openGroup(t, 2)
	sig := tracedAllReduce(t)
	r, err := g.MeasureCollective(sig, Options{Budget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.2f µs per call (±%.1f%%, %d samples x %d, graph %v %s); alg %.1f GB/s, bus %.1f GB/s; traced median %.2f µs",
		r.Label, r.MedianNS/1e3, 100*r.RelCI, r.Samples, r.Batch, r.Graph, r.GraphErr, r.AlgGBps, r.BusGBps,
		float64(sig.TracedNS.Median)/1e3)
	for _, p := range r.PerRank {
		t.Logf("rank %d (GPU %d %s): %.2f µs, bus %.1f GB/s, throttled %v", p.Rank, p.Device, p.Name, p.MedianNS/1e3, p.BusGBps, p.Throttled)
	}
	if r.Ranks != 2 || len(r.PerRank) != 2 || r.Samples < 10 {
		t.Fatalf("result %+v", r)
	}
	if r.BusBytes != 2*8388608 || math.Abs(r.GBps()-r.BusGBps) > 0.01*r.BusGBps {
		t.Errorf("bus bytes %.0f, GBps %.1f vs bus %.1f", r.BusBytes, r.GBps(), r.BusGBps)
	}
	// 16 MiB over NVLink: tens of microseconds, so between 10 and 1500 GB/s.
	if r.BusGBps < 10 || r.BusGBps > 1500 {
		t.Errorf("bus bandwidth %.1f GB/s", r.BusGBps)
	}
	for _, p := range r.PerRank {
		if p.MedianNS <= 0 || p.MedianNS > r.MaxNS*1.0001 {
			t.Errorf("rank %d median %.0f ns, slowest-rank max %.0f ns", p.Rank, p.MedianNS, r.MaxNS)
		}
	}
	if v, _ := nccl.Version(); v >= nccl.VersionCode(2, 9, 0) && !r.Graph {
		t.Errorf("NCCL %s but no CUDA graph: %s", nccl.VersionString(v), r.GraphErr)
	}
}

// RunSet over every GPU there is (up to two) measures the memory ops and
// the GEMMs of the BLOOM prefill trace, keeps the set's order, and says
// which kernel ran (with two GPUs, from the identity pass): every GEMM by
// cuBLAS's traced kernel, as one GPU's suite finds.
func TestGPUGroupRunSet(t *testing.T) {
	gputest.Require(t, cuda.Init)
	n, err := cuda.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{0}
	if n > 1 {
		idx = append(idx, 1)
	}
	g, err := OpenGroup(idx...)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	set := embedded(t, "h100_bloom-560m_prefill.trace.json.gz")
	var progress strings.Builder
	tiers := []signatures.Tier{signatures.TierMemory, signatures.TierLibrary}
	entries := g.RunSet(set, SuiteOptions{Tiers: tiers, Cache: Rotating, Measure: quick, Progress: &progress})
	var want []string
	runnable := 0
	for _, s := range set.Signatures {
		if s.Tier == signatures.TierMemory || s.Tier == signatures.TierLibrary {
			want = append(want, s.ID)
			if s.PartOf == "" {
				runnable++
			}
		}
	}
	if len(entries) != len(want) || len(want) == 0 {
		t.Fatalf("%d entries for %d tier-1/2 signatures", len(entries), len(want))
	}
	for i, e := range entries {
		if e.ID != want[i] {
			t.Errorf("entry %d is %s, want %s", i, e.ID, want[i])
		}
		if e.PartOf == "" && (e.Err != "" || e.Result == nil || e.Result.MedianNS <= 0) {
			t.Errorf("%s %s: %s", e.ID, e.Label, e.Err)
		}
		if e.Class == signatures.ClassGEMM {
			checkSameKernel(t, e, set.Source.GPU(), g.Devices[0].Name)
		}
		// Each GPU times its kernels with CUPTI, one at a time, keeping
		// only its own records.
		if e.PartOf == "" && e.Result != nil && e.Result.KernelMedianNS <= 0 {
			t.Errorf("%s %s: no CUPTI kernel time: %s", e.ID, e.Label, e.Result.KernelErr)
		}
	}
	for _, d := range g.Devices {
		if runnable > len(g.Devices) && !strings.Contains(progress.String(), fmt.Sprintf("GPU %d]", d.Index)) {
			t.Errorf("nothing ran on GPU %d:\n%s", d.Index, progress.String())
		}
	}
	t.Logf("%d signatures over GPUs %v:\n%s", len(entries), g.Indices(), progress.String())
}

// Two GPUs: with Options.Energy the traced all-reduce runs back to back
// on both for a window of whole counter ticks on each GPU; each GPU's
// energy per call is plausible, agrees with the time per call, and the
// sum is the sum of the ranks'.
func TestGPUGroupCollectiveEnergy(t *testing.T) {
	g := openGroup(t, 2)
	for _, d := range g.Devices {
		if d.Meter == nil {
			gputest.Skipf(t, "GPU %d: no NVML: %v", d.Index, d.NVMLErr)
		}
	}
	sig := tracedAllReduce(t)
	o := Options{Budget: 500 * time.Millisecond, Energy: true, EnergyTicks: 10, EnergyWarmup: 300 * time.Millisecond}
	r, err := g.MeasureCollective(sig, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Energy == nil || len(r.RankEnergy) != 2 {
		t.Fatalf("no energy (%d ranks): %s", len(r.RankEnergy), r.EnergyErr)
	}
	t.Logf("%s: %.2f µs per call; %.5f J per call over %d GPUs, %.0f W in all", r.Label, r.MedianNS/1e3, r.Energy.JoulesPerOp, r.Energy.GPUs, r.Energy.Watts)
	sum := 0.0
	for i, e := range r.RankEnergy {
		t.Logf("rank %d (GPU %d): %.5f J per call, %.0f W over %.2f s (%d ticks, %.0f calls, %s), %v",
			i, g.Devices[i].Index, e.JoulesPerOp, e.Watts, e.Seconds, e.Ticks, e.Ops, e.Method, e.GPU)
		if e.Ticks < 10 || e.Ops <= 0 || e.Watts < 50 || e.Watts > 1000 {
			t.Errorf("rank %d: implausible energy %+v", i, e)
		}
		// The window's time per call must agree with the timed one.
		if sPerOp := e.Seconds / e.Ops; sPerOp < 0.5*r.MedianNS*1e-9 || sPerOp > 2*r.MedianNS*1e-9 {
			t.Errorf("rank %d: energy window gives %.1f µs per call, measured %.1f µs", i, sPerOp*1e6, r.MedianNS/1e3)
		}
		sum += e.JoulesPerOp
	}
	if r.Energy.GPUs != 2 || math.Abs(r.Energy.JoulesPerOp-sum) > 1e-12 {
		t.Errorf("sum %+v, ranks' sum %.6f J", r.Energy, sum)
	}
}

// A sharded suite with energy: each signature's energy is measured on the
// GPU that ran it, and the collective's over both GPUs.
func TestGPUGroupRunSetEnergy(t *testing.T) {
	g := openGroup(t, 2)
	set := embedded(t, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	// The all-reduce and the two largest GEMMs.
	var ids []string
	for _, s := range set.Signatures {
		if s.PartOf == "" && (s.Class == signatures.ClassCollective || (s.Class == signatures.ClassGEMM && len(ids) < 3)) {
			ids = append(ids, s.ID)
		}
	}
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	sub := *set
	sub.Signatures = nil
	for _, s := range set.Signatures {
		if keep[s.ID] || keep[s.PartOf] {
			sub.Signatures = append(sub.Signatures, s)
		}
	}
	o := quick
	o.Energy, o.EnergyTicks, o.EnergyWarmup = true, 5, 200*time.Millisecond
	var progress strings.Builder
	entries := g.RunSet(&sub, SuiteOptions{Cache: Rotating, Measure: o, Progress: &progress})
	t.Logf("progress:\n%s", progress.String())
	colls := 0
	for _, e := range entries {
		if e.PartOf != "" {
			continue
		}
		if e.Result == nil || e.Result.Energy == nil {
			t.Errorf("%s %s: no energy: %s %+v", e.ID, e.Label, e.Err, e.Result)
			continue
		}
		en := e.Result.Energy
		t.Logf("%s %s: %.5f J per invocation, %.0f W, %d GPUs", e.ID, e.Label, en.JoulesPerOp, en.Watts, en.GPUs)
		if e.Class == signatures.ClassCollective {
			colls++
			if en.GPUs != 2 || len(e.Result.RankEnergy) != 2 {
				t.Errorf("%s: collective energy over %d GPUs, %d ranks", e.ID, en.GPUs, len(e.Result.RankEnergy))
			}
		} else if en.GPUs != 0 || en.JoulesPerOp <= 0 {
			t.Errorf("%s: single-GPU energy %+v", e.ID, en)
		}
	}
	if colls != 1 {
		t.Errorf("%d collectives measured, want 1", colls)
	}
}
