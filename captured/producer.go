package captured

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/internal/kname"
)

// newProducer makes p launchable with its own buffers for the memory it
// does not share with k, and k's set-0 buffers for the memory it does.
func (k *Kernel) newProducer(p *inject.Producer, fsys fs.FS, s *cuda.Stream) (*Kernel, error) {
	if err := checkPrimer(k.l, p); err != nil {
		return nil, err
	}
	pk, err := New(p.Launch, fsys, Options{Timing: k.timing, Snapshots: k.snaps}, s)
	if err != nil {
		return nil, fmt.Errorf("its producer %s: %w", p.Launch.Name, err)
	}
	defer k.timing.enter(k.timing.enter(workMemory))
	blob := pk.paramBlob(0)
	for _, a := range p.Alias {
		at, ok := k.addrAt(int(a[1]), a[2])
		if !ok {
			continue // outside the consumer's buffer: the producer's own memory
		}
		binary.LittleEndian.PutUint64(blob[p.Launch.Ptrs[a[0]].Off:], uint64(at))
	}
	offsets := make([]int, len(p.Launch.Params))
	for i, prm := range p.Launch.Params {
		offsets[i] = prm[0]
	}
	pb, err := cuda.NewParamBlock(blob, offsets)
	if err != nil {
		pk.Close()
		return nil, err
	}
	pk.blocks[0].Free()
	pk.blocks[0] = pb
	return pk, nil
}

// checkPrimer is nil when New may build p to prime l, else why it leaves
// p out.
func checkPrimer(l *inject.Launch, p *inject.Producer) error {
	if p.Launch != nil && kname.Collective(p.Launch.Name) {
		// An NCCL kernel runs only with its communicator and its
		// peers: launched alone it waits on flags no peer sets, or
		// faults (a tensor-parallel bundle's elementwise kernels
		// after an all-reduce lost the context so).
		return errors.New("its producer " + p.Launch.Name + ": a collective, which runs only with its peers")
	}
	if err := p.Check(l); err != nil {
		return err
	}
	if err := checkProducer(p.Launch); err != nil {
		// Kept as recorded, such a word could still be a pointer into the
		// capturing process's memory; re-pointed, it could be a dtype a
		// kernel asserts on. Either loses the context, for a producer that
		// only warms the cache.
		return fmt.Errorf("its producer %s: %w", p.Launch.Name, err)
	}
	return nil
}

// addrAt is where pointer i of k's launch points in buffer set 0, moved
// by d bytes; false when that lies outside its buffer.
func (k *Kernel) addrAt(i int, d int64) (cuda.DevicePtr, bool) {
	g := k.groupOf(i)
	if g == nil {
		return 0, false
	}
	off := int64(k.l.Ptrs[i].Value-g.base) + d
	if off < 0 || off >= g.size {
		return 0, false
	}
	return g.bufs[0].Add(int(off)), true
}

// Producers is how many producers prime k.
func (k *Kernel) Producers() int { return len(k.producers) }

// Prime implements launch.Primer: the producers' launches, in the order
// recorded, when k has them (k then has one buffer set); nothing
// otherwise, so that each sample still starts from a flushed L2.
func (k *Kernel) Prime(s *cuda.Stream, set int) error {
	for _, p := range k.producers {
		if err := p.Launch(s, 0); err != nil {
			return err
		}
	}
	return nil
}

// PrimeKernels implements launch.Primer: the producers' names, whose
// activities are not the signature's.
func (k *Kernel) PrimeKernels() []string {
	var names []string
	for _, p := range k.producers {
		if !slices.Contains(names, p.l.Name) {
			names = append(names, p.l.Name)
		}
	}
	return names
}

// Producer reports whether the primed mode runs producers before k.
func (k *Kernel) Producer() bool { return len(k.producers) > 0 }
