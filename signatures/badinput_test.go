package signatures

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kreplay/kreplay/internal/traces"
)

func trace(events ...string) string {
	return `{"schemaVersion": 1, "traceEvents": [` + strings.Join(events, ",\n") + `], "traceName": "t"}`
}

const (
	goodOp     = `{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":10.5,"dur":5,"args":{"External id":7,"Input Dims":[[4,8],[4,8],[]],"Input Strides":[[8,1],[8,1],[]],"Input type":["c10::Half","c10::Half","Scalar"],"Concrete Inputs":["","","1"]}}`
	goodKernel = `{"ph":"X","cat":"kernel","name":"void elementwise_kernel<128>(int)","pid":0,"tid":7,"ts":12,"dur":1.25,"args":{"External id":7,"device":0,"stream":7,"correlation":3,"registers per thread":16,"shared memory":0,"grid":[1,1,1],"block":[128,1,1]}}`
)

func gz(s []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(s)
	w.Close()
	return b.Bytes()
}

func TestGoodMinimalTrace(t *testing.T) {
	set, err := Import(strings.NewReader(trace(goodOp, goodKernel)), "mini.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Signatures) != 1 {
		t.Fatalf("%d signatures", len(set.Signatures))
	}
	s := set.Signatures[0]
	if s.Op != "aten::add" || s.Class != ClassElementwise || s.Tier != TierKernel || s.Count != 1 ||
		s.TracedNS.Total != 1250 || s.Tensor == nil || s.Tensor.Numel != 32 {
		t.Errorf("signature %+v tensor %+v", s, s.Tensor)
	}
}

func TestBadInput(t *testing.T) {
	kernelWith := func(old, new string) string { return strings.Replace(goodKernel, old, new, 1) }
	for _, tc := range []struct {
		name  string
		input string
		event int    // wanted event index, -1 for none
		want  string // substring of the error
	}{
		{"empty", "", -1, "empty input"},
		{"array", `[{"ph":"X"}]`, -1, "not a JSON object"},
		{"no events", `{"schemaVersion":1}`, -1, "no traceEvents"},
		{"events not array", `{"traceEvents":{}}`, -1, "not an array"},
		{"garbage after", trace(goodOp) + "x", -1, "after the top-level object"},
		{"truncated", trace(goodOp, goodKernel)[:200], 0, "unexpected EOF"},
		{"truncated after event", `{"traceEvents":[` + goodOp, 1, "unexpected EOF"},
		{"missing comma", `{"traceEvents":[` + goodOp + goodKernel + `]}`, 1, "expected ','"},
		{"bad literal", trace(`{"ph":"X","cat":"kernel","x":tru}`), 0, "invalid literal"},
		{"bad escape", trace(`{"name":"a\qb"}`), 0, "bad escape"},
		{"kernel no ts", trace(kernelWith(`"ts":12,`, "")), 0, "has no ts"},
		{"kernel no grid", trace(kernelWith(`"grid":[1,1,1],`, "")), 0, "has no grid"},
		{"negative dur", trace(kernelWith(`"dur":1.25`, `"dur":-3`)), 0, "absurd"},
		{"huge dur", trace(kernelWith(`"dur":1.25`, `"dur":1e15`)), 0, "absurd"},
		{"zero grid", trace(kernelWith(`"grid":[1,1,1]`, `"grid":[0,1,1]`)), 0, "absurd"},
		{"4-d grid", trace(kernelWith(`"grid":[1,1,1]`, `"grid":[1,1,1,1]`)), 0, "more than 3"},
		{"fractional stream", trace(kernelWith(`"stream":7`, `"stream":7.5`)), 0, "not an integer"},
		{"memcpy no bytes", trace(`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","ts":1,"dur":1,"args":{}}`), 0, "has no bytes"},
		{"negative dims", trace(strings.Replace(goodOp, "[[4,8],", "[[-4,8],", 1)), 0, "absurd"},
		{"negative stride", trace(strings.Replace(goodOp, `[[8,1],`, `[[-8,1],`, 1)), 0, "absurd value: stride"},
		{"strides mismatch", trace(strings.Replace(goodOp, `[[8,1],`, `[[8],`, 1)), 0, "do not match"},
		{"deep nesting", trace(`{"args":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`), 0, "nesting"},
		{"event not object", trace(`42`), 0, "not a JSON object"},
		{"control char", trace("{\"name\":\"a\tb\"}"), 0, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(strings.NewReader(tc.input), "bad.json", Options{})
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if fe.File != "bad.json" || fe.Event != tc.event || fe.Offset < 0 || fe.Offset > int64(len(tc.input)) {
				t.Errorf("error %v: file %q event %d offset %d, want event %d", err, fe.File, fe.Event, fe.Offset, tc.event)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.json") {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// Cutting a real trace anywhere must give an error, never a partial set.
func TestTruncatedRealTrace(t *testing.T) {
	raw := plainTrace(t, "h100_bloom-560m_prefill.trace.json.gz")
	// Cuts in 24 places of the file, each a few bytes either side of an
	// event's start (where the parser switches state); the gzip'ed cuts
	// go through the decompressing reader too.
	for i := 1; i < 24; i++ {
		at := len(raw) * i / 24
		at += bytes.Index(raw[at:], []byte("\n  {"))
		for _, cut := range []int{at - 1, at + 4} {
			if _, err := Import(bytes.NewReader(raw[:cut]), "cut.json", Options{}); err == nil {
				t.Errorf("cut at byte %d of %d: no error", cut, len(raw))
			}
		}
		if i%4 == 0 {
			if _, err := Import(bytes.NewReader(gz(raw[:at])), "cut.json.gz", Options{}); err == nil {
				t.Errorf("gzip of cut at byte %d: no error", at)
			}
		}
	}
	gzRaw, _ := traces.ReadFile("h100_bloom-560m_prefill.trace.json.gz")
	for _, cut := range []int{5, 100, len(gzRaw) / 2, len(gzRaw) - 9} {
		_, err := Import(bytes.NewReader(gzRaw[:cut]), "cut.json.gz", Options{})
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("gzip cut at %d: error %v is not a *FormatError", cut, err)
		}
	}
}

// plainTrace is the embedded trace name, decompressed.
func plainTrace(t testing.TB, name string) []byte {
	t.Helper()
	data, err := traces.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The reader gets the same result however the input is split into reads:
// one byte at a time, over the first eighth of a real trace (its first
// events, closed as a trace), which crosses the reader's 1 MiB window.
func TestOneByteReads(t *testing.T) {
	full := plainTrace(t, "h100_bloom-560m_prefill.trace.json.gz")
	end := len(full)/8 + bytes.Index(full[len(full)/8:], []byte("\n  {"))
	raw := append(append([]byte{}, bytes.TrimRight(full[:end], ",\n ")...), "]}"...)
	want, err := Import(bytes.NewReader(raw), "x", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Import(iotestOneByte{bytes.NewReader(raw)}, "x", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Signatures) != len(want.Signatures) || got.Links != want.Links {
		t.Errorf("one-byte reads: %d signatures %+v, want %d %+v", len(got.Signatures), got.Links, len(want.Signatures), want.Links)
	}
}

type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

func FuzzImport(f *testing.F) {
	f.Add([]byte(trace(goodOp, goodKernel)))
	f.Add([]byte(trace()))
	raw := plainTrace(f, "h100_bloom-560m_prefill.trace.json.gz")
	f.Add(raw[:4096])
	f.Add(raw[len(raw)-4096:])
	tp := plainTrace(f, "2xh200_llama-7b-tp2_prefill.rank0.trace.json.gz")
	if i := bytes.Index(tp, []byte(`"Collective name"`)); i > 2000 {
		f.Add([]byte(`{"traceEvents":[` + string(tp[bytes.LastIndex(tp[:i], []byte("\n  {")):bytes.Index(tp[i:], []byte("\n  }"))+i+4]) + `]}`))
	}
	f.Add(gz([]byte(trace(goodOp, goodKernel))))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Import(bytes.NewReader(data), "fuzz.json", Options{})
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			return
		}
		n := 0
		for _, s := range set.Signatures {
			n += s.Count
			if s.Tier < TierMemory || s.Tier > TierKernel {
				t.Fatalf("tier %d", s.Tier)
			}
		}
		if n != set.Links.Activities || n != len(set.Timeline) {
			t.Fatalf("counts %d, activities %d, timeline %d", n, set.Links.Activities, len(set.Timeline))
		}
		var buf bytes.Buffer
		if err := WriteSet(&buf, set); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSet(&buf, "fuzz"); err != nil {
			t.Fatalf("set does not read back: %v", err)
		}
	})
}
