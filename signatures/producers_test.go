package signatures

import (
	"reflect"
	"testing"

	"github.com/kreplay/kreplay/internal/inject"
)

// producers lists the launches that last touched a call's memory within
// the window, oldest first, and picks the list most calls have: a decode
// RMSNorm's multiply reads the hidden state the square read four launches
// before and the rsqrt's output just written.
func TestProducers(t *testing.T) {
	l := func(key, name string, ptrs int) *inject.Launch {
		return &inject.Launch{Key: key, Name: name, Ptrs: make([]inject.Pointer, ptrs)}
	}
	x := &inject.Index{Launches: []*inject.Launch{
		l("a-copy", "copy", 2), l("b-pow", "pow", 2), l("c-mean", "mean", 2),
		l("d-add", "add", 2), l("e-rsqrt", "rsqrt", 2), l("f-mul", "mul", 3), l("g-gemm", "gemm", 3),
	}}
	const hidden, sq, mean, eps, rs, out = 0x10000, 0x20000, 0x30000, 0x30200, 0x30400, 0x40000
	layer := []struct {
		key  string
		ptrs []uint64
	}{
		{"a-copy", []uint64{0x9000, hidden}},
		{"b-pow", []uint64{hidden, sq}},
		{"c-mean", []uint64{sq, mean}},
		{"d-add", []uint64{mean, eps}},
		{"e-rsqrt", []uint64{eps, rs}},
		{"f-mul", []uint64{hidden, rs, out}},
	}
	var muls []int
	for rep := 0; rep < 3; rep++ {
		for _, c := range layer {
			if c.key == "f-mul" {
				muls = append(muls, len(x.Calls))
			}
			x.Calls = append(x.Calls, c.key)
			x.CallPtrs = append(x.CallPtrs, c.ptrs)
		}
	}
	// A fourth call, after a GEMM that read its output: another list.
	x.Calls = append(x.Calls, "g-gemm", "f-mul")
	x.CallPtrs = append(x.CallPtrs, []uint64{out + 0x40, 0x50000, 0x60000}, []uint64{0x70000, 0x70400, out})
	muls = append(muls, len(x.Calls)-1)

	got := producers(x, "f-mul", muls)
	var keys []string
	var alias [][][3]int64
	for _, p := range got {
		keys = append(keys, p.Launch.Key)
		alias = append(alias, p.Alias)
	}
	if want := []string{"b-pow", "e-rsqrt"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("producers %v, want %v", keys, want)
	}
	if want := [][][3]int64{{{0, 0, 0}}, {{1, 1, 0}}}; !reflect.DeepEqual(alias, want) {
		t.Errorf("aliases %v, want %v", alias, want)
	}
	if got := touchers(x, x.Launch("f-mul"), muls[3]); len(got) != 1 || got[0].Launch.Key != "g-gemm" || got[0].Alias[0] != [3]int64{0, 2, 0x40} {
		t.Errorf("after the GEMM: %+v", got)
	}
	if got := producers(&inject.Index{Calls: x.Calls, Launches: x.Launches}, "f-mul", muls); got != nil {
		t.Errorf("without call pointers: %v", got)
	}
}

// The context of a call is every launch recorded in the window before it,
// oldest first, whatever memory it touched (its aliases where it shares
// some), leaving out launches of the call's own function; the list most
// calls have wins.
func TestContext(t *testing.T) {
	l := func(key, name string) *inject.Launch {
		return &inject.Launch{Key: key, Name: name, Ptrs: make([]inject.Pointer, 2)}
	}
	x := &inject.Index{Launches: []*inject.Launch{ // sorted by key, as Index.Launch needs
		l("attn", "attention"), l("gate", "gemv"), l("kv", "cat"), l("norm", "rmsnorm"), l("silu", "silu"), l("up", "gemv"),
	}}
	const xin, w1, w2, h = 0x10000, 0x20000, 0x30000, 0x40000
	var gemvs []int
	for layer := 0; layer < 3; layer++ {
		for _, c := range []struct {
			key  string
			ptrs []uint64
		}{
			{"attn", []uint64{0x50000, 0x60000}}, {"kv", []uint64{0x60000, 0x70000}}, {"norm", []uint64{h, xin}},
			{"gate", []uint64{xin, w1}}, {"up", []uint64{xin, w2}}, {"silu", []uint64{0x80000, 0x90000}},
		} {
			if c.key == "gate" {
				gemvs = append(gemvs, len(x.Calls))
			}
			x.Calls = append(x.Calls, c.key)
			x.CallPtrs = append(x.CallPtrs, c.ptrs)
		}
	}
	got := mostCommon(x, "gate", gemvs, contextOf)
	var keys []string
	for _, p := range got {
		keys = append(keys, p.Launch.Key)
		if !p.Context {
			t.Errorf("%s not marked as context", p.Launch.Key)
		}
		if err := p.Check(x.Launch("gate")); err != nil {
			t.Errorf("%s: %v", p.Launch.Key, err)
		}
	}
	// Each call has eight launches before it, of which the previous
	// layer's gate and up (gemv too) are left out; the first call's window
	// goes on at the inference's end (its last layer), as inferences run
	// back to back.
	if want := []string{"kv", "norm", "silu", "attn", "kv", "norm"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("context %v, want %v", keys, want)
	}
	first := contextOf(x, x.Launch("gate"), gemvs[0])
	if len(first) != 6 || first[0].Launch.Key != "kv" || first[2].Launch.Key != "silu" || first[3].Launch.Key != "attn" {
		t.Fatalf("the first call's context %+v, want the last layer's kv, norm and silu, then this layer's attn, kv and norm", first)
	}
	if a := first[1].Alias; !reflect.DeepEqual(a, [][3]int64{{1, 0, 0}}) {
		t.Errorf("the last layer's norm writes the first GEMV's input buffer: aliases %v", a)
	}
	short := &inject.Index{Launches: x.Launches, Calls: x.Calls[:2], CallPtrs: x.CallPtrs[:2]}
	if got := contextOf(short, x.Launch("kv"), 1); len(got) != 1 || got[0].Launch.Key != "attn" {
		t.Errorf("an inference shorter than the window: context %+v, want only the attention before it", got)
	}
	if a := got[5].Alias; !reflect.DeepEqual(a, [][3]int64{{1, 0, 0}}) {
		t.Errorf("the norm's aliases %v, want its output as the GEMV's input", a)
	}
	if got[3].Alias != nil {
		t.Errorf("attention shares no memory, aliases %v", got[3].Alias)
	}
}
