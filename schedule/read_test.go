package schedule

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// sample is a schedule in the format, with every record kind.
const sample = `kreplay-schedule 1
source recorder
cpu Intel(R) Xeon(R) Platinum 8480+
clock CLOCK_MONOTONIC
process 2 overhead_ns_per_inference -1500 armed_wall_ns 414000000 measured_wall_ns 410000000
name 7 _Z20elementwise_kernelILi128ELi2EEviT1_
name 9 void at::native::vectorized_elementwise_kernel<4, float>(int)
inference 0 start 183745623000
M 0 100 1
L 150 2150 0x0 7 80,1,1 128,1,1
L 2200 3000 0x7f3a00001230 9 1,2,3 32,4,1
C 9000 11000 0x0 8 DtoH async
C 11000 12000 0x0 4096 HtoD sync
S 12000 12500 0x0 64 async
G 13000 14000 0x0 0x55aa
R 14000 14100 0xdead 0x0
E 14100 14200 0x7f3a00001230 0xdead
Q 14200 14300 e 0xdead notready
Q 14300 14400 s 0x0 ready
M 14400 14500 2
W 14500 95000 s 0x0
W 95000 95100 e 0xdead
W 95100 95200 c 0x0
M 96000 96100 3
end 0 96200
inference 1 start 183745719200
M 0 100 1
L 150 2150 0x0 7 80,1,1 128,1,1
W 2200 5000 c 0x0
end 1 5000
`

func TestReadSample(t *testing.T) {
	s, err := Read(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := &Schedule{
		Version: 1, Source: SourceRecorder, CPU: "Intel(R) Xeon(R) Platinum 8480+", Clock: "CLOCK_MONOTONIC",
		Process: &Process{PID: 2, OverheadNSPerInference: -1500, ArmedWallNS: 414000000, MeasuredWallNS: 410000000},
		Names: map[uint32]string{
			7: "_Z20elementwise_kernelILi128ELi2EEviT1_",
			9: "void at::native::vectorized_elementwise_kernel<4, float>(int)",
		},
		Inferences: []Inference{{
			Start: 183745623000, End: 96200,
			Calls: []Call{
				{Kind: Mark, Enter: 0, Exit: 100, Mark: 1},
				{Kind: Launch, Enter: 150, Exit: 2150, Stream: 0, Name: 7, Grid: [3]uint32{80, 1, 1}, Block: [3]uint32{128, 1, 1}},
				{Kind: Launch, Enter: 2200, Exit: 3000, Stream: 0x7f3a00001230, Name: 9, Grid: [3]uint32{1, 2, 3}, Block: [3]uint32{32, 4, 1}},
				{Kind: Copy, Enter: 9000, Exit: 11000, Bytes: 8, Dir: DtoH},
				{Kind: Copy, Enter: 11000, Exit: 12000, Bytes: 4096, Dir: HtoD, Sync: true},
				{Kind: Memset, Enter: 12000, Exit: 12500, Bytes: 64},
				{Kind: Graph, Enter: 13000, Exit: 14000, Handle: 0x55aa},
				{Kind: Record, Enter: 14000, Exit: 14100, Handle: 0xdead},
				{Kind: StreamWait, Enter: 14100, Exit: 14200, Stream: 0x7f3a00001230, Handle: 0xdead},
				{Kind: Query, Enter: 14200, Exit: 14300, Target: OnEvent, Handle: 0xdead},
				{Kind: Query, Enter: 14300, Exit: 14400, Target: OnStream, Ready: true},
				{Kind: Mark, Enter: 14400, Exit: 14500, Mark: 2},
				{Kind: Wait, Enter: 14500, Exit: 95000, Target: OnStream},
				{Kind: Wait, Enter: 95000, Exit: 95100, Target: OnEvent, Handle: 0xdead},
				{Kind: Wait, Enter: 95100, Exit: 95200, Target: OnContext},
				{Kind: Mark, Enter: 96000, Exit: 96100, Mark: 3},
			},
		}, {
			Start: 183745719200, End: 5000,
			Calls: []Call{
				{Kind: Mark, Enter: 0, Exit: 100, Mark: 1},
				{Kind: Launch, Enter: 150, Exit: 2150, Name: 7, Grid: [3]uint32{80, 1, 1}, Block: [3]uint32{128, 1, 1}},
				{Kind: Wait, Enter: 2200, Exit: 5000, Target: OnContext},
			},
		}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("read\n%+v\nwant\n%+v", s, want)
	}
	// Write gives the sample back, byte for byte (it is in Write's order).
	var buf bytes.Buffer
	if err := Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	if buf.String() != sample {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), sample)
	}
}

func TestReadGzip(t *testing.T) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write([]byte(sample))
	z.Close()
	s, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Read(strings.NewReader(sample))
	if !sameSchedule(s, plain) {
		t.Error("the gzip'ed sample reads differently from the plain one")
	}
}

// TestReadErrors: each bad input is an error naming its line and what is
// wrong.
func TestReadErrors(t *testing.T) {
	head := "kreplay-schedule 1\nname 1 k\ninference 0 start 100\n"
	tail := "end 0 1000\n"
	rec := func(r string) string { return head + "M 0 1 1\n" + r + "\n" + tail }
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"empty", "", 0, "empty input"},
		{"not a schedule", "hello\n", 1, "not a kreplay schedule"},
		{"version", "kreplay-schedule 2\n", 1, "version"},
		{"unknown kind", rec("X 0 1 0x0"), 5, "unknown record kind"},
		{"unknown line", head + "foo bar\n", 4, "unknown line"},
		{"negative time", rec("L -5 10 0x0 1 1,1,1 1,1,1"), 5, "not a non-negative integer"},
		{"exit before enter", rec("L 50 10 0x0 1 1,1,1 1,1,1"), 5, "want 0 <= enter <= exit"},
		{"float time", rec("L 1.5 10 0x0 1 1,1,1 1,1,1"), 5, "not a non-negative integer"},
		{"huge time", rec("L 99999999999999999999 1 0x0 1 1,1,1 1,1,1"), 5, "over 2^62"},
		{"two spaces", rec("L 1  10 0x0 1 1,1,1 1,1,1"), 5, "fields, want 7"},
		{"trailing space", rec("M 1 2 2 "), 5, "fields, want 4"},
		{"bad handle", rec("G 1 2 0x0 dead"), 5, "handle"},
		{"undefined name", rec("L 1 2 0x0 5 1,1,1 1,1,1"), 5, "name id 5"},
		{"zero grid", rec("L 1 2 0x0 1 0,1,1 1,1,1"), 5, "grid"},
		{"bad grid", rec("L 1 2 0x0 1 1,1 1,1,1"), 5, "want x,y,z"},
		{"direction", rec("C 1 2 0x0 8 XtoY async"), 5, "copy direction"},
		{"sync word", rec("S 1 2 0x0 8 maybe"), 5, "async or sync"},
		{"wait target", rec("W 1 2 x 0x0"), 5, "wait target"},
		{"context handle", rec("W 1 2 c 0x5"), 5, "context wait names a handle"},
		{"query result", rec("Q 1 2 s 0x0 done"), 5, "ready or notready"},
		{"mark kind", rec("M 1 2 4"), 5, "mark kind 4"},
		{"first enter", head + "M 5 6 1\n" + tail, 4, "enters at 5, not 0"},
		{"unsorted", rec("M 50 60 2\nM 40 60 2"), 6, "before the previous record"},
		{"no end", head + "M 0 1 1\n", 4, "no end line"},
		{"end before exit", head + "M 0 2000 1\n" + tail, 5, "before the last exit"},
		{"no records", head + tail, 4, "no records"},
		{"numbering", head + "M 0 1 1\nend 1 1000\n", 5, "inference number 1, want 0"},
		{"overlap", head + "M 0 1 1\n" + tail + "inference 1 start 500\n", 6, "before the previous one's end"},
		{"record outside", "kreplay-schedule 1\nM 0 1 1\n", 2, "outside an inference"},
		{"duplicate name", "kreplay-schedule 1\nname 1 a\nname 1 b\n", 3, "defined twice"},
		{"header late", head + "M 0 1 1\n" + tail + "cpu x\n", 6, "after the first name"},
		{"header twice", "kreplay-schedule 1\ncpu a\ncpu b\n", 3, "a second cpu line"},
		{"source", "kreplay-schedule 1\nsource guess\n", 2, "source"},
		{"process", "kreplay-schedule 1\nprocess 1 overhead 5\n", 2, "process"},
		{"no inference", "kreplay-schedule 1\n", 1, "no inference"},
		{"name space", "kreplay-schedule 1\nname 1  x\n", 2, "starts or ends with a space"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Errorf("%v: want an error at line %d", err, tc.line)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want it to say %q", err, tc.want)
			}
		})
	}
}

func TestWriteRejects(t *testing.T) {
	good := func() *Schedule {
		s, err := Read(strings.NewReader(sample))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		change func(s *Schedule)
		want   string
	}{
		{"version", func(s *Schedule) { s.Version = 0 }, "version"},
		{"source", func(s *Schedule) { s.Source = "" }, "source"},
		{"name newline", func(s *Schedule) { s.Names[7] = "a\nb" }, "line break"},
		{"unknown kind", func(s *Schedule) { s.Inferences[0].Calls[1].Kind = 'X' }, "unknown record kind"},
		{"stray field", func(s *Schedule) { s.Inferences[0].Calls[1].Bytes = 5 }, "does not have"},
		{"no calls", func(s *Schedule) { s.Inferences[1].Calls = nil }, "no records"},
		{"big grid", func(s *Schedule) { s.Inferences[0].Calls[1].Grid[0] = 1<<31 + 1 }, "grid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.change(s)
			err := Write(&bytes.Buffer{}, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func sameSchedule(a, b *Schedule) bool { return reflect.DeepEqual(a, b) }

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }
