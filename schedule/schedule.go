// Package schedule reads, writes and simulates the host schedule of an
// inference: the CUDA calls its host made, with their enter and exit times,
// as kreplay's schedule recorder captures them (or, as a guess, as a
// profiled trace records them: FromTrace). Bind matches a schedule's GPU
// work to a signature set's timeline; Simulate replays the schedule against
// predicted GPU times (docs/whole-inference.md, section 3) and Energy adds
// the energy model (section 4). FasterHost and UnderGraphs are host
// what-ifs (section 5): each returns a schedule to simulate in place of
// the captured one.
//
// The file format, one record per line with fields separated by one space
// (times are integer ns relative to the inference's first record, handles
// are hex pointer values, 0x0 the legacy default stream, 0x2 the
// per-thread one):
//
//	kreplay-schedule 1
//	source recorder|trace
//	cpu <text>
//	clock <text>
//	process <index> overhead_ns_per_inference <n> armed_wall_ns <n> measured_wall_ns <n> [overhead_ns_per_call <n>]
//	name <id> <kernel name>
//	inference <i> start <ns on the clock>
//	L <enter> <exit> <stream> <name id> <gx,gy,gz> <bx,by,bz>   kernel launch
//	C <enter> <exit> <stream> <bytes> HtoD|DtoH|DtoD|HtoH|PtoP async|sync   copy
//	S <enter> <exit> <stream> <bytes> async|sync                 memset
//	G <enter> <exit> <stream> <graph exec>                      graph launch
//	W <enter> <exit> s <stream> | e <event> | c 0x0             host wait
//	Q <enter> <exit> s <stream>|e <event> ready|notready            query
//	R <enter> <exit> <event> <stream>                           event record
//	E <enter> <exit> <stream> <event>                           stream wait
//	M <enter> <exit> 1|2|3                                      mark
//	end <i> <ns after start>
//
// The header lines after the first (source, cpu, clock, process) are each
// optional and come at most once, before the first name or inference
// line; a schedule without a source line is the recorder's. A name line
// comes before the first record that uses its id. Inferences are numbered
// from 0 in order, each holds at least one record, its first record enters
// at 0, records are sorted by enter, and its end is at or after every
// record's exit; the next inference starts at or after that end.
package schedule

import (
	"fmt"
	"strings"
)

// Version is the schedule format version this package reads and writes.
const Version = 1

// Sources of a schedule.
const (
	// SourceRecorder is a schedule recorded by kreplay's schedule recorder
	// in an unprofiled run.
	SourceRecorder = "recorder"
	// SourceTrace is a schedule made from a profiled trace (FromTrace): a
	// guess, for the profiler slows the host.
	SourceTrace = "trace"
)

// Kind is a record's kind, its letter in the file.
type Kind byte

// The record kinds.
const (
	Launch     Kind = 'L' // kernel launch
	Copy       Kind = 'C' // memory copy
	Memset     Kind = 'S' // memset
	Graph      Kind = 'G' // CUDA graph launch
	Wait       Kind = 'W' // host wait: stream, event or context synchronize
	Query      Kind = 'Q' // stream or event query
	Record     Kind = 'R' // event record
	StreamWait Kind = 'E' // stream wait on an event
	Mark       Kind = 'M' // the runner's mark
)

// GPU reports whether the kind puts work on the GPU (L, C, S, G).
func (k Kind) GPU() bool { return k == Launch || k == Copy || k == Memset || k == Graph }

func (k Kind) String() string { return string(rune(k)) }

// Target is what a wait or query waits on.
type Target byte

// Targets of W and Q records.
const (
	OnStream  Target = 's'
	OnEvent   Target = 'e'
	OnContext Target = 'c' // W only: the whole device
)

// Direction is a copy's direction.
type Direction string

// Copy directions.
const (
	HtoD Direction = "HtoD"
	DtoH Direction = "DtoH"
	DtoD Direction = "DtoD"
	HtoH Direction = "HtoH"
	PtoP Direction = "PtoP"
)

// Marks the runner records (M records).
const (
	MarkStart = 1 // an inference's start
	MarkToken = 2 // a generated token
	MarkEnd   = 3 // an inference's end, after its CUDA event is recorded
)

// The recorders a schedule's recorder line names.
const (
	RecorderHook  = "hook"
	RecorderCUPTI = "cupti"
)

// Schedule is the host schedule of one measured process.
type Schedule struct {
	Version int
	// Source is SourceRecorder or SourceTrace.
	Source string
	// CPU and Clock name the host's CPU and the clock of the start times;
	// empty when unknown.
	CPU   string
	Clock string
	// Recorder is how the recorder recorded it: RecorderHook (the driver's
	// entry points interposed: the measured inferences are the recorded
	// ones) or RecorderCUPTI (CUPTI's callbacks, recorded inferences
	// interleaved with measured ones); empty when the file does not say.
	Recorder string
	// Process is the recorder's process and overhead; nil when unknown.
	Process *Process
	// Names are the kernel names launches refer to, by id: the mangled
	// names the recorder got from cuFuncGetName, or a trace's names.
	Names map[uint32]string
	// Inferences are run back to back, in order.
	Inferences []Inference
}

// Process is the measured process and the recorder's overhead in it.
type Process struct {
	// PID is the process's index in the capture (the recorder's process
	// argument), not an OS process id.
	PID int64
	// OverheadNSPerInference is (armed wall - measured wall) per
	// inference; it may be negative (noise).
	OverheadNSPerInference int64
	ArmedWallNS            int64
	MeasuredWallNS         int64
	// CallOverheadNS is the recorder's own cost per recorded call,
	// measured by a probe in the process before it recorded (the same
	// kernel launched unrecorded and recorded); 0 when unknown. Simulate
	// takes it off the host's time before each call.
	CallOverheadNS int64
}

// Inference is one inference's calls.
type Inference struct {
	// Start is the first record's enter on the schedule's clock, ns.
	Start int64
	// End is the inference's end, ns after Start.
	End   int64
	Calls []Call
	// Fresh marks an inference that does not follow the previous one back
	// to back: the host synchronized with the GPU before it (the first of
	// a block of recorded inferences, docs/whole-inference.md).
	Fresh bool
}

// Call is one recorded call. Enter and Exit are ns after the inference's
// Start. Which other fields are meaningful depends on Kind (see the
// package doc's format).
type Call struct {
	Kind        Kind
	Enter, Exit int64
	// Stream is the stream of L, C, S, G, R and E, and of W and Q with
	// Target OnStream.
	Stream uint64
	// Handle is the event of R and E, and of W and Q with Target OnEvent;
	// the graph exec of G.
	Handle uint64
	// Name is a launch's kernel name id (Schedule.Names).
	Name        uint32
	Grid, Block [3]uint32
	// Bytes of a copy or memset; Dir of a copy.
	Bytes int64
	Dir   Direction
	// Sync is set for a synchronous copy or memset (the host waits).
	Sync bool
	// Target of W and Q.
	Target Target
	// Ready is set for a Q that returned ready.
	Ready bool
	// Mark is an M record's mark kind.
	Mark uint8
}

// IsWait reports whether the call blocks the host until the GPU reaches a
// point: W, a synchronous copy or memset, a Q that returned ready.
func (c *Call) IsWait() bool {
	switch c.Kind {
	case Wait:
		return true
	case Copy, Memset:
		return c.Sync
	case Query:
		return c.Ready
	}
	return false
}

// GPUOps counts the inference's GPU ops (L, C, S, G).
func (inf *Inference) GPUOps() int {
	n := 0
	for i := range inf.Calls {
		if inf.Calls[i].Kind.GPU() {
			n++
		}
	}
	return n
}

// Limits on what a schedule may claim.
const (
	maxNS    = int64(1) << 62
	maxBytes = int64(1) << 50
)

// checkText checks a free-text header value or kernel name.
func checkText(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty text")
	case strings.ContainsAny(s, "\n\r"):
		return fmt.Errorf("text holds a line break")
	case s[0] == ' ' || s[len(s)-1] == ' ':
		return fmt.Errorf("text starts or ends with a space")
	}
	return nil
}

// checkCall checks a call's fields against its kind; names are the ids
// defined so far.
func checkCall(c *Call, names map[uint32]string) error {
	if c.Enter < 0 || c.Enter > maxNS || c.Exit < c.Enter || c.Exit > maxNS {
		return fmt.Errorf("times %d..%d: want 0 <= enter <= exit", c.Enter, c.Exit)
	}
	switch c.Kind {
	case Launch:
		if _, ok := names[c.Name]; !ok {
			return fmt.Errorf("name id %d has no name line before it", c.Name)
		}
		for i := 0; i < 3; i++ {
			if c.Grid[i] == 0 || c.Block[i] == 0 || c.Grid[i] > 1<<31 || c.Block[i] > 1<<31 {
				return fmt.Errorf("grid %v block %v: want every dimension in 1..2^31", c.Grid, c.Block)
			}
		}
	case Copy:
		switch c.Dir {
		case HtoD, DtoH, DtoD, HtoH, PtoP:
		default:
			return fmt.Errorf("copy direction %q", c.Dir)
		}
		fallthrough
	case Memset:
		if c.Bytes < 0 || c.Bytes > maxBytes {
			return fmt.Errorf("%d bytes", c.Bytes)
		}
	case Wait:
		switch c.Target {
		case OnStream, OnEvent:
		case OnContext:
			if c.Handle != 0 || c.Stream != 0 {
				return fmt.Errorf("a context wait names a handle")
			}
		default:
			return fmt.Errorf("wait target %q: want s, e or c", rune(c.Target))
		}
	case Query:
		if c.Target != OnStream && c.Target != OnEvent {
			return fmt.Errorf("query target %q: want s or e", rune(c.Target))
		}
	case Mark:
		if c.Mark < MarkStart || c.Mark > MarkEnd {
			return fmt.Errorf("mark kind %d: want 1, 2 or 3", c.Mark)
		}
	case Graph, Record, StreamWait:
	default:
		return fmt.Errorf("unknown record kind %q", rune(c.Kind))
	}
	if *c != c.kindFields() {
		return fmt.Errorf("sets fields a %s record does not have", c.Kind)
	}
	return nil
}

// kindFields is the call with only the fields of its kind kept.
func (c *Call) kindFields() Call {
	k := Call{Kind: c.Kind, Enter: c.Enter, Exit: c.Exit}
	switch c.Kind {
	case Launch:
		k.Stream, k.Name, k.Grid, k.Block = c.Stream, c.Name, c.Grid, c.Block
	case Copy:
		k.Stream, k.Bytes, k.Dir, k.Sync = c.Stream, c.Bytes, c.Dir, c.Sync
	case Memset:
		k.Stream, k.Bytes, k.Sync = c.Stream, c.Bytes, c.Sync
	case Graph:
		k.Stream, k.Handle = c.Stream, c.Handle
	case Wait, Query:
		k.Target, k.Ready = c.Target, c.Ready && c.Kind == Query
		if c.Target == OnStream {
			k.Stream = c.Stream
		} else {
			k.Handle = c.Handle
		}
	case Record, StreamWait:
		k.Stream, k.Handle = c.Stream, c.Handle
	case Mark:
		k.Mark = c.Mark
	}
	return k
}

// Validate checks the schedule as Read does: Write writes only a schedule
// that Validate accepts.
func (s *Schedule) Validate() error {
	if s.Version != Version {
		return fmt.Errorf("schedule version %d, want %d", s.Version, Version)
	}
	if s.Source != SourceRecorder && s.Source != SourceTrace {
		return fmt.Errorf("source %q: want %q or %q", s.Source, SourceRecorder, SourceTrace)
	}
	if s.Recorder != "" && s.Recorder != RecorderHook && s.Recorder != RecorderCUPTI {
		return fmt.Errorf("recorder %q: want %q or %q", s.Recorder, RecorderHook, RecorderCUPTI)
	}
	for _, t := range []string{s.CPU, s.Clock} {
		if t != "" {
			if err := checkText(t); err != nil {
				return fmt.Errorf("cpu or clock: %w", err)
			}
		}
	}
	if p := s.Process; p != nil {
		o := p.OverheadNSPerInference
		if p.PID > maxNS || p.ArmedWallNS > maxNS || p.MeasuredWallNS > maxNS || p.CallOverheadNS > maxNS || p.CallOverheadNS < 0 || o > maxNS || o < -maxNS {
			return fmt.Errorf("process %d: a field past 2^62", p.PID)
		}
		if p.PID < 0 || p.ArmedWallNS < 0 || p.MeasuredWallNS < 0 {
			return fmt.Errorf("process %d: a negative pid or wall", p.PID)
		}
	}
	for id, n := range s.Names {
		if err := checkText(n); err != nil {
			return fmt.Errorf("name %d: %w", id, err)
		}
	}
	if len(s.Inferences) == 0 {
		return fmt.Errorf("no inference")
	}
	prevEnd := int64(-1)
	for i := range s.Inferences {
		if err := s.Inferences[i].check(s.Names, prevEnd); err != nil {
			return fmt.Errorf("inference %d: %w", i, err)
		}
		prevEnd = s.Inferences[i].Start + s.Inferences[i].End
	}
	return nil
}

// check checks an inference; prevEnd is the previous one's end on the
// clock (-1 for the first).
func (inf *Inference) check(names map[uint32]string, prevEnd int64) error {
	if inf.Start < 0 || inf.Start > maxNS || inf.Start < prevEnd {
		return fmt.Errorf("start %d: want >= 0 and >= the previous inference's end %d", inf.Start, prevEnd)
	}
	if len(inf.Calls) == 0 {
		return fmt.Errorf("no records")
	}
	if inf.Calls[0].Enter != 0 {
		return fmt.Errorf("the first record enters at %d, not 0", inf.Calls[0].Enter)
	}
	var last int64
	for k := range inf.Calls {
		c := &inf.Calls[k]
		if err := checkCall(c, names); err != nil {
			return fmt.Errorf("record %d (%s): %w", k, c.Kind, err)
		}
		if k > 0 && c.Enter < inf.Calls[k-1].Enter {
			return fmt.Errorf("record %d enters at %d, before the previous record", k, c.Enter)
		}
		last = max(last, c.Exit)
	}
	if inf.End < last || inf.End > maxNS || inf.Start > maxNS-inf.End {
		return fmt.Errorf("end %d: want at or after the last exit %d", inf.End, last)
	}
	return nil
}
