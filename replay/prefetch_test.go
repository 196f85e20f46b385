package replay

import (
	"bytes"
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/kreplay/kreplay/captured"
	"github.com/kreplay/kreplay/internal/gztest"
	"github.com/kreplay/kreplay/internal/inject"
	"github.com/kreplay/kreplay/signatures"
)

// capturedSig is a signature replayed by its captured binary from fsys:
// a launch of module m<id> with one pointer, whose snapshot is s<id>.
func capturedSig(id string, fsys fs.FS) *signatures.Signature {
	const a = 0x7f0000000000
	return &signatures.Signature{ID: id, Label: "label " + id, Tier: signatures.TierKernel, Count: 1,
		Binary: &signatures.Binary{FS: fsys, Launch: &inject.Launch{
			Name: "k" + id, Module: "m" + id,
			Ptrs: []inject.Pointer{{Value: a, Base: a, Range: 4096, Snapshot: inject.Snapshot{Snap: "s" + id, SnapLen: 64, Whole: true}}},
		}}}
}

// In RunSet, each captured signature's files are read while the one
// before it, captured or not, is measured (after it is prepared), and
// that read is over before the signature is prepared; the first
// signature's are left to its own preparing. A signature whose module is
// missing gets none of its snapshots read, and is measured as the others
// (its preparing would report it).
func TestRunSetPrefetch(t *testing.T) {
	files := fstest.MapFS{}
	for _, id := range []string{"a", "b", "d", "e"} {
		files["modules/m"+id+".cubin.gz"] = gztest.MapFile(t, []byte("image "+id))
		files["snaps/s"+id+".bin.gz"] = gztest.MapFile(t, bytes.Repeat([]byte(id), 64))
	}
	fsys := gztest.NewCountingFS(files)
	plain := &signatures.Signature{ID: "c", Label: "label c", Tier: signatures.TierKernel, Count: 1}
	set := &signatures.Set{Signatures: []*signatures.Signature{
		capturedSig("a", fsys), capturedSig("b", fsys), plain, capturedSig("d", fsys),
		capturedSig("e", fsys), capturedSig("f", fsys), // f's files are missing
	}}
	d := &Device{snaps: captured.NewSnapshots(1 << 20)}
	var log []string
	measure := func(s *signatures.Signature, o SuiteOptions, e *Entry) error {
		// What preparing s would find read: its snapshot, its module.
		log = append(log, fmt.Sprintf("%s:%d%d", s.ID, fsys.Count("snaps/s"+s.ID+".bin.gz"), fsys.Count("modules/m"+s.ID+".cubin.gz")))
		if o.prepared != nil {
			o.prepared()
		}
		e.Result = &Result{Stats: Stats{MedianNS: 1000}}
		return nil
	}
	entries := d.runSet(set, SuiteOptions{Cache: Context}, measure)
	want := "[a:00 b:11 c:00 d:11 e:11 f:01]"
	if got := fmt.Sprint(log); got != want {
		t.Errorf("files read when each is prepared: %s, want %s", got, want)
	}
	for _, e := range entries {
		if e.Err != "" || e.Result == nil {
			t.Errorf("%s: error %q, result %v", e.ID, e.Err, e.Result)
		}
	}
	for name, n := range map[string]int{"snaps/sa.bin.gz": 0, "modules/ma.cubin.gz": 0, "snaps/sb.bin.gz": 1, "snaps/sf.bin.gz": 0} {
		if got := fsys.Count(name); got != n {
			t.Errorf("%s opened %d times, want %d", name, got, n)
		}
	}
}

// The next signature RunSet prepares on its own: resolved, parts, left
// out and reused signatures are passed over; one a family or a shared
// window measures stops the search, as does a last signature.
func TestNextPrepared(t *testing.T) {
	sig := func(id, partOf string) *signatures.Signature {
		return &signatures.Signature{ID: id, PartOf: partOf}
	}
	a, b, p, x, r := sig("a", ""), sig("b", ""), sig("p", "a"), sig("x", ""), sig("r", "")
	o := SuiteOptions{Skip: map[string]string{"x": "left out"}, Previous: map[string]Entry{"r": {ID: "r", Result: &Result{}}}}
	for _, tc := range []struct {
		name     string
		rest     []*signatures.Signature
		resolved map[string]Entry
		fams     map[string]*familyRun
		shared   map[string]*sharedGroup
		want     string
	}{
		{name: "next", rest: []*signatures.Signature{a, b}, want: "a"},
		{name: "none", want: ""},
		{name: "passed over", rest: []*signatures.Signature{p, x, r, b}, resolved: map[string]Entry{}, want: "b"},
		{name: "resolved", rest: []*signatures.Signature{a, b}, resolved: map[string]Entry{"a": {}}, want: "b"},
		{name: "family", rest: []*signatures.Signature{x, a, b}, fams: map[string]*familyRun{"a": {}}, want: ""},
		{name: "shared", rest: []*signatures.Signature{a, b}, shared: map[string]*sharedGroup{"a": {}}, want: ""},
		{name: "resolved family member", rest: []*signatures.Signature{a, b}, resolved: map[string]Entry{"a": {}}, fams: map[string]*familyRun{"a": {done: true}}, want: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if s := o.nextPrepared(tc.rest, tc.resolved, tc.fams, tc.shared); s != nil {
				got = s.ID
			}
			if got != tc.want {
				t.Errorf("next %q, want %q", got, tc.want)
			}
		})
	}
}
