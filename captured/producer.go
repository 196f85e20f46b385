package captured

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// newProducer makes p launchable with its own buffers for the memory it
// does not share with k, and k's set-0 buffers for the memory it does.
func (k *Kernel) newProducer(p *inject.Producer, fsys fs.FS, s *cuda.Stream) (*Kernel, error) {
	if err := p.Check(k.l); err != nil {
		return nil, err
	}
	pk, err := New(p.Launch, fsys, Options{}, s)
	if err != nil {
		return nil, fmt.Errorf("its producer %s: %w", p.Launch.Name, err)
	}
	blob := slices.Clone([]byte(p.Launch.Blob))
	for _, g := range pk.groups {
		for _, i := range g.ptrs {
			q := p.Launch.Ptrs[i]
			binary.LittleEndian.PutUint64(blob[q.Off:], uint64(g.bufs[0])+(q.Value-g.base))
		}
	}
	for _, a := range p.Alias {
		q := p.Launch.Ptrs[a[0]]
		binary.LittleEndian.PutUint64(blob[q.Off:], uint64(int64(k.addr(int(a[1])))+a[2]))
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

// addr is where pointer i of k's launch points in buffer set 0.
func (k *Kernel) addr(i int) cuda.DevicePtr {
	p := k.l.Ptrs[i]
	for _, g := range k.groups {
		if slices.Contains(g.ptrs, i) {
			return g.bufs[0].Add(int(p.Value - g.base))
		}
	}
	return 0
}

// Prime implements launch.Primer: the producer's launch, when k has one
// (k then has one buffer set); nothing otherwise, so that each sample
// still starts from a flushed L2.
func (k *Kernel) Prime(s *cuda.Stream, set int) error {
	if k.producer == nil {
		return nil
	}
	return k.producer.Launch(s, 0)
}

// PrimeKernel implements launch.Primer: the producer's name, whose
// activities are not the signature's ("" without a producer).
func (k *Kernel) PrimeKernel() string {
	if k.producer == nil {
		return ""
	}
	return k.producer.l.Name
}

// Producer reports whether the primed mode runs a producer before k.
func (k *Kernel) Producer() bool { return k.producer != nil }
