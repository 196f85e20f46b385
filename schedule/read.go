package schedule

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine is the longest line Read accepts (a kernel name can be long).
const maxLine = 16 << 20

// A LineError is a Read error: the line (from 1) and what is wrong.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("schedule line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Read reads a schedule (plain or gzip text) and checks it strictly: an
// unknown record kind, a malformed field or a broken rule of the format is
// an error naming its line.
func Read(r io.Reader) (*Schedule, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var src io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("schedule: gzip: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	p := &parser{s: &Schedule{Names: map[uint32]string{}, Source: SourceRecorder}, seen: map[string]bool{}}
	for sc.Scan() {
		p.line++
		if err := p.parse(sc.Text()); err != nil {
			return nil, &LineError{Line: p.line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Line: p.line + 1, Err: err}
	}
	if err := p.finish(); err != nil {
		return nil, &LineError{Line: p.line, Err: err}
	}
	// The line checks above are the format's rules; Validate holds the
	// same rules for Write, and stays a safety net here.
	if err := p.s.Validate(); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return p.s, nil
}

type parser struct {
	s    *Schedule
	line int
	// seen marks header keys read; open is set inside an inference.
	seen    map[string]bool
	open    bool
	prevEnd int64
	last    int64 // the open inference's latest exit
}

func (p *parser) parse(line string) error {
	if p.line == 1 {
		if line != "kreplay-schedule "+strconv.Itoa(Version) {
			if v, ok := strings.CutPrefix(line, "kreplay-schedule "); ok {
				return fmt.Errorf("schedule version %q, want %d", v, Version)
			}
			return errors.New("not a kreplay schedule: the first line is not \"kreplay-schedule 1\"")
		}
		p.s.Version = Version
		return nil
	}
	key, rest, _ := strings.Cut(line, " ")
	switch key {
	case "source", "cpu", "clock", "recorder", "process":
		return p.header(key, rest)
	case "name":
		return p.name(rest)
	case "inference":
		return p.inference(rest)
	case "end":
		return p.end(rest)
	}
	if len(key) != 1 {
		return fmt.Errorf("unknown line %q", clip(key))
	}
	if !p.open {
		return fmt.Errorf("%s record outside an inference", clip(key))
	}
	c, err := parseCall(line, p.s.Names)
	if err != nil {
		return err
	}
	inf := &p.s.Inferences[len(p.s.Inferences)-1]
	if len(inf.Calls) == 0 && c.Enter != 0 {
		return fmt.Errorf("the inference's first record enters at %d, not 0", c.Enter)
	}
	if n := len(inf.Calls); n > 0 && c.Enter < inf.Calls[n-1].Enter {
		return fmt.Errorf("record enters at %d, before the previous record (%d): several threads' calls? (recorders before "+
			"this version kept them all, a tensor-parallel run's watchdog polling events too: capture again)", c.Enter, inf.Calls[n-1].Enter)
	}
	p.last = max(p.last, c.Exit)
	inf.Calls = append(inf.Calls, c)
	return nil
}

func (p *parser) header(key, rest string) error {
	if p.seen[key] {
		return fmt.Errorf("a second %s line", key)
	}
	if len(p.s.Names) > 0 || len(p.s.Inferences) > 0 {
		return fmt.Errorf("%s line after the first name or inference line", key)
	}
	p.seen[key] = true
	switch key {
	case "source":
		if rest != SourceRecorder && rest != SourceTrace {
			return fmt.Errorf("source %q: want %q or %q", clip(rest), SourceRecorder, SourceTrace)
		}
		p.s.Source = rest
	case "recorder":
		if rest != RecorderHook && rest != RecorderCUPTI {
			return fmt.Errorf("recorder %q: want %q or %q", clip(rest), RecorderHook, RecorderCUPTI)
		}
		p.s.Recorder = rest
	case "cpu", "clock":
		if err := checkText(rest); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if key == "cpu" {
			p.s.CPU = rest
		} else {
			p.s.Clock = rest
		}
	case "process":
		return p.process(rest)
	}
	return nil
}

func (p *parser) process(rest string) error {
	f := strings.Split(rest, " ")
	if len(f) != 7 && len(f) != 9 {
		return fmt.Errorf("process: %d fields, want 7 or 9", len(f))
	}
	if f[1] != "overhead_ns_per_inference" || f[3] != "armed_wall_ns" || f[5] != "measured_wall_ns" || (len(f) == 9 && f[7] != "overhead_ns_per_call") {
		return errors.New("process: want <pid> overhead_ns_per_inference <n> armed_wall_ns <n> measured_wall_ns <n> [overhead_ns_per_call <n>]")
	}
	var pr Process
	var err error
	if pr.PID, err = num(f[0], "pid"); err != nil {
		return err
	}
	over := f[2]
	neg := strings.HasPrefix(over, "-")
	if pr.OverheadNSPerInference, err = num(strings.TrimPrefix(over, "-"), "overhead"); err != nil {
		return err
	}
	if neg {
		if pr.OverheadNSPerInference == 0 {
			return errors.New("overhead \"-0\"")
		}
		pr.OverheadNSPerInference = -pr.OverheadNSPerInference
	}
	if pr.ArmedWallNS, err = num(f[4], "armed wall"); err != nil {
		return err
	}
	if pr.MeasuredWallNS, err = num(f[6], "measured wall"); err != nil {
		return err
	}
	if len(f) == 9 {
		if pr.CallOverheadNS, err = num(f[8], "overhead per call"); err != nil {
			return err
		}
	}
	p.s.Process = &pr
	return nil
}

func (p *parser) name(rest string) error {
	idText, name, ok := strings.Cut(rest, " ")
	if !ok {
		return errors.New("name line: want name <id> <name>")
	}
	id, err := num(idText, "name id")
	if err != nil {
		return err
	}
	if id > 1<<32-1 {
		return fmt.Errorf("name id %d is over 2^32-1", id)
	}
	if _, dup := p.s.Names[uint32(id)]; dup {
		return fmt.Errorf("name id %d defined twice", id)
	}
	if err := checkText(name); err != nil {
		return fmt.Errorf("name %d: %w", id, err)
	}
	p.s.Names[uint32(id)] = name
	return nil
}

func (p *parser) inference(rest string) error {
	if p.open {
		return fmt.Errorf("inference %d has no end line", len(p.s.Inferences)-1)
	}
	f := strings.Split(rest, " ")
	fresh := len(f) == 4 && f[3] == "fresh"
	if len(f) != 3 && !fresh || f[1] != "start" {
		return errors.New("inference line: want inference <i> start <ns> [fresh]")
	}
	if err := p.index(f[0]); err != nil {
		return err
	}
	start, err := num(f[2], "start")
	if err != nil {
		return err
	}
	if len(p.s.Inferences) > 0 && start < p.prevEnd {
		return fmt.Errorf("inference starts at %d, before the previous one's end %d", start, p.prevEnd)
	}
	p.s.Inferences = append(p.s.Inferences, Inference{Start: start, Fresh: fresh})
	p.open, p.last = true, 0
	return nil
}

// index checks an inference line's or end line's number.
func (p *parser) index(text string) error {
	i, err := num(text, "inference number")
	if err != nil {
		return err
	}
	want := len(p.s.Inferences)
	if p.open {
		want--
	}
	if i != int64(want) {
		return fmt.Errorf("inference number %d, want %d", i, want)
	}
	return nil
}

func (p *parser) end(rest string) error {
	if !p.open {
		return errors.New("end line outside an inference")
	}
	f, err := fields(rest, 2)
	if err != nil {
		return fmt.Errorf("end line: %w", err)
	}
	if err := p.index(f[0]); err != nil {
		return err
	}
	end, err := num(f[1], "end")
	if err != nil {
		return err
	}
	inf := &p.s.Inferences[len(p.s.Inferences)-1]
	if len(inf.Calls) == 0 {
		return errors.New("the inference has no records")
	}
	if end < p.last {
		return fmt.Errorf("end %d is before the last exit %d", end, p.last)
	}
	if inf.Start > maxNS-end {
		return fmt.Errorf("end %d after start %d is past 2^62 ns", end, inf.Start)
	}
	inf.End = end
	p.prevEnd = inf.Start + end
	p.open = false
	return nil
}

func (p *parser) finish() error {
	switch {
	case p.line == 0:
		return errors.New("empty input")
	case p.open:
		return fmt.Errorf("inference %d has no end line", len(p.s.Inferences)-1)
	case len(p.s.Inferences) == 0:
		return errors.New("no inference")
	}
	return nil
}

// parseCall parses one record line.
func parseCall(line string, names map[uint32]string) (Call, error) {
	var c Call
	f := strings.Split(line, " ")
	c.Kind = Kind(f[0][0])
	want, ok := recordFields[c.Kind]
	if !ok {
		return c, fmt.Errorf("unknown record kind %q", clip(f[0]))
	}
	if len(f) != want {
		return c, fmt.Errorf("%s record has %d fields, want %d", c.Kind, len(f), want)
	}
	var err error
	if c.Enter, err = num(f[1], "enter"); err != nil {
		return c, err
	}
	if c.Exit, err = num(f[2], "exit"); err != nil {
		return c, err
	}
	if err := c.parseFields(f[3:]); err != nil {
		return c, err
	}
	if err := checkCall(&c, names); err != nil {
		return c, fmt.Errorf("%s record: %w", c.Kind, err)
	}
	return c, nil
}

// recordFields is the number of fields of each record kind's line.
var recordFields = map[Kind]int{
	Launch: 7, Copy: 7, Memset: 6, Graph: 5, Wait: 5, Query: 6, Record: 5, StreamWait: 5, Mark: 4,
}

// parseFields parses the fields after enter and exit.
func (c *Call) parseFields(f []string) error {
	var err error
	switch c.Kind {
	case Launch:
		if c.Stream, err = handle(f[0]); err != nil {
			return err
		}
		id, err := num(f[1], "name id")
		if err != nil {
			return err
		}
		if id > 1<<32-1 {
			return fmt.Errorf("name id %d is over 2^32-1", id)
		}
		c.Name = uint32(id)
		if c.Grid, err = dim3(f[2], "grid"); err != nil {
			return err
		}
		if c.Block, err = dim3(f[3], "block"); err != nil {
			return err
		}
	case Copy, Memset:
		if c.Stream, err = handle(f[0]); err != nil {
			return err
		}
		if c.Bytes, err = num(f[1], "bytes"); err != nil {
			return err
		}
		mode := f[2]
		if c.Kind == Copy {
			c.Dir, mode = Direction(f[2]), f[3]
		}
		switch mode {
		case "async":
		case "sync":
			c.Sync = true
		default:
			return fmt.Errorf("%q: want async or sync", clip(mode))
		}
	case Graph:
		if c.Stream, err = handle(f[0]); err != nil {
			return err
		}
		c.Handle, err = handle(f[1])
	case Wait, Query:
		if len(f[0]) != 1 {
			return fmt.Errorf("target %q: want s, e or c", clip(f[0]))
		}
		c.Target = Target(f[0][0])
		h, err := handle(f[1])
		if err != nil {
			return err
		}
		if c.Target == OnStream {
			c.Stream = h
		} else {
			c.Handle = h
		}
		if c.Kind == Query {
			switch f[2] {
			case "ready":
				c.Ready = true
			case "notready":
			default:
				return fmt.Errorf("query result %q: want ready or notready", clip(f[2]))
			}
		}
	case Record:
		if c.Handle, err = handle(f[0]); err != nil {
			return err
		}
		c.Stream, err = handle(f[1])
	case StreamWait:
		if c.Stream, err = handle(f[0]); err != nil {
			return err
		}
		c.Handle, err = handle(f[1])
	case Mark:
		var m int64
		if m, err = num(f[0], "mark kind"); err == nil {
			if m < MarkStart || m > MarkEnd {
				return fmt.Errorf("mark kind %d: want 1, 2 or 3", m)
			}
			c.Mark = uint8(m)
		}
	}
	return err
}

// fields splits s at single spaces into exactly n non-empty fields.
func fields(s string, n int) ([]string, error) {
	f := strings.Split(s, " ")
	if len(f) != n {
		return nil, fmt.Errorf("%d fields, want %d", len(f), n)
	}
	return f, nil
}

// num parses a non-negative decimal integer (digits only, at most 2^62).
func num(s, what string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("%s is empty (two spaces, or a space at the end?)", what)
	}
	var v int64
	for i := 0; i < len(s); i++ {
		d := s[i]
		if d < '0' || d > '9' {
			return 0, fmt.Errorf("%s %q is not a non-negative integer", what, clip(s))
		}
		v = v*10 + int64(d-'0')
		if v > maxNS {
			return 0, fmt.Errorf("%s %q is over 2^62", what, clip(s))
		}
	}
	return v, nil
}

// handle parses a hex handle "0x..." (a pointer value).
func handle(s string) (uint64, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || len(h) > 16 {
		return 0, fmt.Errorf("handle %q: want 0x and up to 16 hex digits", clip(s))
	}
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("handle %q: want 0x and up to 16 hex digits", clip(s))
	}
	return v, nil
}

// dim3 parses "x,y,z" of positive integers.
func dim3(s, what string) ([3]uint32, error) {
	var d [3]uint32
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return d, fmt.Errorf("%s %q: want x,y,z", what, clip(s))
	}
	for i, p := range parts {
		v, err := num(p, what)
		if err != nil {
			return d, err
		}
		if v < 1 || v > 1<<31 {
			return d, fmt.Errorf("%s %q: a dimension out of 1..2^31", what, clip(s))
		}
		d[i] = uint32(v)
	}
	return d, nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
