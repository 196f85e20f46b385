package replay

import (
	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/signatures"
)

// prefetcher reads a captured signature's files into a Device's
// snapshots (captured.Snapshots.Prefetch) on a goroutine of its own, so
// that the host reads and decodes the next signature's files while the
// device measures one, and preparing it finds them read. At most one
// prefetch is in flight. A nil snaps prefetches nothing.
type prefetcher struct {
	snaps *captured.Snapshots
	done  chan struct{} // closed when the prefetch in flight ends; nil when none is
}

// start waits for the prefetch in flight, then starts one of the files
// preparing sig in cache mode cache reads: those of its captured binary
// and of the launches that prime it (primers). It starts none for a
// signature without a captured binary and its kernels directory. A
// prefetch's error, or panic, is dropped: preparing reads the same file
// and reports it.
func (p *prefetcher) start(sig *signatures.Signature, cache CacheMode) {
	p.wait()
	if !prefetchable(p.snaps, sig) {
		return
	}
	done := make(chan struct{})
	p.done = done
	go func() {
		defer close(done)
		prefetchFiles(p.snaps, sig, cache)
	}()
}

// prefetchFiles reads the files preparing sig in cache mode cache reads
// into snaps, as prefetcher.start does, on the caller's goroutine; its
// error, or panic, is dropped.
func prefetchFiles(snaps *captured.Snapshots, sig *signatures.Signature, cache CacheMode) {
	if !prefetchable(snaps, sig) {
		return
	}
	defer func() { _ = recover() }()
	prods, _, _ := primers(sig, cache.Resolve())
	_ = snaps.Prefetch(sig.Binary.Launch, prods, sig.Binary.FS)
}

// prefetchable tells whether there is a store to read sig's files into
// and files to read: a captured binary with its kernels directory, of a
// signature that can be prepared.
func prefetchable(snaps *captured.Snapshots, sig *signatures.Signature) bool {
	b := sig.Binary
	return snaps != nil && b != nil && b.FS != nil && b.Launch != nil && unpreparable(sig) == nil
}

// wait returns once no prefetch is in flight.
func (p *prefetcher) wait() {
	if p.done != nil {
		<-p.done
		p.done = nil
	}
}

// nextPrepared is the signature of rest that RunSet prepares next on its
// own, where it is the first of rest that RunSet measures: nil when that
// one is measured in a family's or a shared window's group (their own
// order), or none is. Signatures resolved already, parts, those left out
// and those reused are passed over.
func (o SuiteOptions) nextPrepared(rest []*signatures.Signature, resolved map[string]Entry, fams map[string]*familyRun, shared map[string]*sharedGroup) *signatures.Signature {
	for _, s := range rest {
		if _, ok := resolved[s.ID]; ok {
			continue
		}
		if fams[s.ID] != nil || shared[s.ID] != nil {
			return nil
		}
		if e := newEntry(s, nil); !o.settled(s, &e) {
			return s
		}
	}
	return nil
}
