package captured

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/inject"
)

// Launch records of rank 1 of a tensor-parallel Mistral-7B decode capture
// (torch 2.11, H200), as the recorder wrote them into its index.
const (
	// mul i64[8,128] bool[]: PyTorch's dynamic-cast elementwise kernel;
	// its lambda's word at 640 is the functor byte, dtypes {Long, Long,
	// Bool} and four stale bytes, recorded as a pointer.
	keyMulLongBool = "56b6632d7b1e1604"
	// cuBLAS's gemv of bmm f32[8,64,1] f32[8,1,1]: a flag byte 1 with a
	// stale address's bytes above it at 168.
	keyGemv = "df593a589dc951f8"
	// An elementwise kernel whose unused OffsetCalculator slots hold stale
	// stack words that point into device memory (even: re-pointed, as
	// before).
	keyStale = "5182ccb886409846"
	// An elementwise kernel with three genuine pointers, one of them at an
	// 8-byte offset (an i64 view).
	keyPlain = "4d249abb349adf68"
)

func recordedLaunches(t *testing.T) map[string]*inject.Launch {
	t.Helper()
	data, err := os.ReadFile("testdata/suspect_launches.json")
	if err != nil {
		t.Fatal(err)
	}
	var ls []*inject.Launch
	if err := json.Unmarshal(data, &ls); err != nil {
		t.Fatal(err)
	}
	out := map[string]*inject.Launch{}
	for _, l := range ls {
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
		out[l.Key] = l
	}
	return out
}

// suspectOffsets are the parameter offsets of suspects(l, align).
func suspectOffsets(l *inject.Launch, align uint64) []int {
	var offs []int
	for _, i := range suspects(l, align) {
		offs = append(offs, l.Ptrs[i].Off)
	}
	return offs
}

// The recorded words that are packed fields are suspects: for a consumer
// the odd ones, for a producer also the stale word 0x7f9f00000004 (an
// IntDivider's shift and stale bytes, in an OffsetCalculator slot the
// kernel leaves unused). Genuine pointers, an i64 view at an 8-byte offset
// among them, and a byte view that shares its allocation with another
// pointer are not.
func TestSuspects(t *testing.T) {
	rec := recordedLaunches(t)
	const a, b = 0x7f0000000000, 0x7f1000000000
	byteView := &inject.Launch{Ptrs: []inject.Pointer{
		{Off: 0, Value: a + 512, Base: a, Range: 4096, Group: 0},
		{Off: 8, Value: a + 1025, Base: a, Range: 4096, Group: 0},
	}}
	innerVouches := &inject.Launch{
		Ptrs:  []inject.Pointer{{Off: 0, Value: a, Base: a, Range: 4096}, {Off: 8, Value: b + 3, Base: b, Range: 4096, Group: 1}},
		Inner: []inject.Inner{{In: 0, At: 16, Value: b + 64, Base: b, Range: 4096}},
	}
	for _, c := range []struct {
		name     string
		l        *inject.Launch
		consumer []int
		producer []int
	}{
		{"mul i64 bool: dtype word", rec[keyMulLongBool], []int{640}, []int{640}},
		{"gemv: flag byte", rec[keyGemv], []int{168}, []int{168}},
		{"stale words", rec[keyStale], nil, []int{56}},
		{"genuine pointers", rec[keyPlain], nil, nil},
		{"odd byte view beside its storage", byteView, nil, nil},
		{"odd, its allocation held as an inner pointer", innerVouches, nil, nil},
	} {
		if c.l == nil {
			t.Fatalf("%s: launch missing from testdata", c.name)
		}
		if diff := cmp.Diff(c.consumer, suspectOffsets(c.l, consumerAlign)); diff != "" {
			t.Errorf("%s: a consumer's suspect offsets (-want +got):\n%s", c.name, diff)
		}
		if diff := cmp.Diff(c.producer, suspectOffsets(c.l, producerAlign)); diff != "" {
			t.Errorf("%s: a producer's suspect offsets (-want +got):\n%s", c.name, diff)
		}
	}
}

// fakeBuffers gives every group of k one buffer, 2 MiB-aligned as
// cuMemAlloc's of that size are.
func fakeBuffers(k *Kernel) {
	for i, g := range k.groups {
		g.bufs = []cuda.DevicePtr{cuda.DevicePtr(0x7f0000000000 + uint64(i)<<24)}
	}
}

// The parameters of mul i64[8,128] bool[] keep their dtype word as
// recorded and re-point the four genuine pointers; re-pointed as well
// (the replay before), the word's dtype byte of the first input is an
// address byte, no ScalarType, on which fetch_and_cast asserts.
func TestParamBlobKeepsDtypes(t *testing.T) {
	l := recordedLaunches(t)[keyMulLongBool]
	const word = 640
	recorded := slices8(l.Blob[word : word+8])
	if want := []byte{0x03, 0x04, 0x04, 0x0b, 0x04, 0, 0, 0}; !cmp.Equal(recorded, want) {
		t.Fatalf("recorded word at %d: % x, want % x", word, recorded, want)
	}

	k := &Kernel{l: l}
	k.keepSuspects()
	k.groupPointers()
	k.groupInner()
	fakeBuffers(k)
	blob := k.paramBlob(0)
	if got := blob[word : word+8]; !cmp.Equal(slices8(got), recorded) {
		t.Errorf("word at %d: % x, want it as recorded % x", word, got, recorded)
	}
	// dtypes[0..2] follow the functor byte: out Long, inputs Long, Bool.
	if got := blob[word+1 : word+4]; !cmp.Equal(slices8(got), []byte{4, 4, 11}) {
		t.Errorf("dtypes % x, want 04 04 0b", got)
	}
	repointed := 0
	for _, g := range k.groups {
		for _, i := range g.ptrs {
			p := l.Ptrs[i]
			want := uint64(g.bufs[0]) + p.Value - g.base
			if got := binary.LittleEndian.Uint64(blob[p.Off:]); got != want {
				t.Errorf("pointer at %d: %#x, want %#x", p.Off, got, want)
			}
			repointed++
		}
	}
	if repointed != len(l.Ptrs)-1 {
		t.Errorf("%d pointers re-pointed, want %d", repointed, len(l.Ptrs)-1)
	}
	if kept := k.Kept(); len(kept) != 1 || !strings.Contains(kept[0], "at 640 (0x40b040403) is odd") {
		t.Errorf("Kept() = %q, want the word at 640", kept)
	}

	old := &Kernel{l: l}
	old.groupPointers()
	old.groupInner()
	fakeBuffers(old)
	if got := old.paramBlob(0)[word+2]; got < 0x40 {
		t.Errorf("re-pointed, the input dtype byte is %#x: expected an address byte past every ScalarType", got)
	}
}

func slices8(b []byte) []byte { return append([]byte(nil), b...) }

// A producer with a suspect word is refused before anything is launched
// or allocated, with an error that drops it (not fatal) and names the
// word; one without passes the check.
func TestProducerNotRestorable(t *testing.T) {
	rec := recordedLaunches(t)
	k := &Kernel{l: rec[keyPlain]}
	for _, c := range []struct {
		key  string
		want []string // in the error; nil: no error
	}{
		{keyMulLongBool, []string{"at 640", "0x40b040403", "not a multiple of 8"}},
		{keyStale, []string{"at 56", "0x7f9f00000004"}},
		{keyGemv, []string{"at 168"}},
		{keyPlain, nil},
	} {
		p := &inject.Producer{Launch: rec[c.key], Context: true}
		if c.want == nil {
			if err := checkProducer(p.Launch); err != nil {
				t.Errorf("%s: checkProducer = %v, want nil", c.key, err)
			}
			continue
		}
		pk, err := k.newProducer(p, nil, nil)
		if pk != nil || !errors.Is(err, ErrNotRestorable) {
			t.Fatalf("%s: newProducer = %v, %v; want ErrNotRestorable", c.key, pk, err)
		}
		if producerFatal(err) {
			t.Errorf("%s: producerFatal(%v) = true, want the producer dropped", c.key, err)
		}
		for _, s := range append(c.want, "its producer "+p.Launch.Name) {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not say %q", c.key, err, s)
			}
		}
	}
}

// An inner pointer found in the bytes at a suspect word belongs to no
// buffer: it gets no group and no patch.
func TestSuspectHoldsNoInner(t *testing.T) {
	const a, b = 0x7f0000000000, 0x7f1000000000
	l := &inject.Launch{
		Ptrs: []inject.Pointer{
			{Off: 0, Value: a, Base: a, Range: 4096},
			{Off: 8, Value: b + 0x40403, Base: b, Range: 1 << 20, Group: 1},
		},
		Inner: []inject.Inner{{In: 1, At: 5, Value: a + 64, Base: a, Range: 4096}},
	}
	k := &Kernel{l: l}
	k.keepSuspects()
	k.groupPointers()
	k.groupInner()
	if len(k.groups) != 1 || len(k.groups[0].inner) != 0 || len(k.groups[0].patches) != 0 {
		t.Errorf("groups %+v: want one, with no inner pointer", k.groups[0])
	}
}

// Note says what the replay left out and what it kept as recorded.
func TestNote(t *testing.T) {
	for _, c := range []struct {
		name string
		k    *Kernel
		want string
	}{
		{"nothing", &Kernel{}, ""},
		{"dropped", &Kernel{dropped: []string{"its producer a: x"}, producers: []*Kernel{{}}},
			"primed without 1 of its 2 producers (its producer a: x)"},
		{"kept", &Kernel{kept: []string{"word"}}, "1 parameter words kept as recorded (word)"},
		{"both", &Kernel{dropped: []string{"d"}, kept: []string{"w", "v"}},
			"primed without 1 of its 1 producers (d); 2 parameter words kept as recorded (w)"},
	} {
		if got := c.k.Note(); got != c.want {
			t.Errorf("%s: Note() = %q, want %q", c.name, got, c.want)
		}
	}
}
