package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/kreplay/kreplay/predict"
	"github.com/kreplay/kreplay/replay"
	"github.com/kreplay/kreplay/signatures"
)

// progressFile appends entries to a JSON-lines file, one line per entry,
// synced to disk as they come. It is the one output file the CLI does not
// write whole (internal/atomicfile): it is appended by design, so that a
// run that dies keeps the lines written before, and resume reads them
// (a torn last line is skipped there).
type progressFile struct {
	mu sync.Mutex
	f  *os.File
}

func openProgress(path string) (*progressFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return &progressFile{f: f}, nil
}

func (p *progressFile) add(src signatures.Source, e replay.Entry) error {
	b, err := json.Marshal(predict.ProgressLine{File: src.File, Workload: src.Workload, Entry: e})
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return p.f.Sync()
}

func (p *progressFile) Close() error { return p.f.Close() }

// readProgress reads the entries of an earlier run's -out file, by set
// file and signature ID; a missing file is an empty run. A torn last line
// is ignored; any other bad line is an error naming the line
// (predict.ReadProgress).
func readProgress(path string) (map[string]map[string]replay.Entry, error) {
	out := map[string]map[string]replay.Entry{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := predict.ReadProgress(f, path)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if out[l.File] == nil {
			out[l.File] = map[string]replay.Entry{}
		}
		out[l.File][l.Entry.ID] = l.Entry
	}
	return out, nil
}
