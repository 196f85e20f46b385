package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/kreplay/kreplay/internal/cuda"
	"github.com/kreplay/kreplay/internal/cupti"
)

// hostWarmRounds are traced rounds run and dropped before the measured
// ones: the first traced launches pay CUPTI's one-time setup.
const hostWarmRounds = 10

// hostQueueBlockPer is how long the queue probe's blocker runs per tiny
// kernel queued behind it: several times a traced launch call's cost, so
// that the host queues all of them before it ends.
const hostQueueBlockPer = 10 * time.Microsecond

// startHostRecording records driver calls, kernels and copies with
// CUPTI (the replays' recorder, with the driver calls added).
func startHostRecording(d *Device) (*recorder, error) {
	return recordKinds(d, nil, cupti.KindConcurrentKernel, cupti.KindMemcpy, cupti.KindDriver)
}

// drainAll synchronizes, flushes CUPTI and returns every record since the
// last drain or discard.
func drainAll(rec *recorder) ([]cupti.Record, error) {
	if err := rec.d.stream.Synchronize(); err != nil {
		return nil, err
	}
	if err := cupti.Flush(); err != nil {
		return nil, err
	}
	return cupti.Drain(), nil
}

// hostRound runs one round: a pause of gap on the host, a launch of the
// kernel for dur, and a wait for it: a synchronize, or with copy the
// .item() pattern (an 8-byte copy to pageable host memory, then a
// synchronize).
func (d *Device) hostRound(k *hostKernel, gap, dur time.Duration, copy bool, buf []byte) error {
	spin(gap)
	if err := k.launch(d.stream, dur); err != nil {
		return err
	}
	if copy {
		return cuda.CopyDtoH(buf, k.buf, d.stream)
	}
	return d.stream.Synchronize()
}

// measureRounds times rounds without CUPTI (RoundTrip), then traces
// o.Rounds synchronize rounds and o.Rounds copy rounds. Call inside Do.
func (d *Device) measureRounds(k *hostKernel, o HostProbeOptions, p *HostProbe) error {
	if err := d.stream.Synchronize(); err != nil {
		return err
	}
	buf := make([]byte, 8)
	rt := make([]float64, 0, o.Rounds)
	for i := 0; i < hostWarmRounds+o.Rounds; i++ {
		spin(o.IdleGap)
		t0 := time.Now()
		if err := d.hostRound(k, 0, o.WakeKernel, false, buf); err != nil {
			return err
		}
		if i >= hostWarmRounds {
			rt = append(rt, float64(time.Since(t0).Nanoseconds()))
		}
	}
	p.RoundTrip = spreadOf(rt)

	rec, err := startHostRecording(d)
	if err != nil {
		return fmt.Errorf("CUPTI: %w", err)
	}
	defer rec.stop()
	for i := 0; i < hostWarmRounds; i++ {
		if err := d.hostRound(k, o.IdleGap, o.WakeKernel, i%2 == 1, buf); err != nil {
			return err
		}
	}
	if err := rec.discard(); err != nil {
		return err
	}
	for _, copy := range []bool{false, true} {
		for i := 0; i < o.Rounds; i++ {
			if err := d.hostRound(k, o.IdleGap, o.WakeKernel, copy, buf); err != nil {
				return err
			}
		}
	}
	recs, err := drainAll(rec)
	if err != nil {
		return err
	}
	rounds, err := hostRounds(recs)
	if err != nil {
		return err
	}
	if err := p.setRounds(rounds); err != nil {
		return err
	}
	if len(p.Rounds) != o.Rounds || len(p.CopyRounds) != o.Rounds {
		return fmt.Errorf("CUPTI recorded %d synchronize and %d copy rounds, want %d of each", len(p.Rounds), len(p.CopyRounds), o.Rounds)
	}
	return nil
}

// hostQueueTries is how many times the queue probe runs, its blocker
// twice as long each time, while the host does not queue two kernels
// before the blocker ends (the host thread stalled: descheduled, or a
// one-time setup in the launch path).
const hostQueueTries = 3

// measureQueue launches a blocker, o.QueueKernels tiny kernels behind it
// and measures their gaps from CUPTI's records (Queue, QueueGapNS). Call
// inside Do.
func (d *Device) measureQueue(k *hostKernel, o HostProbeOptions, p *HostProbe) error {
	rec, err := startHostRecording(d)
	if err != nil {
		return fmt.Errorf("CUPTI: %w", err)
	}
	defer rec.stop()
	block := max(time.Millisecond, time.Duration(o.QueueKernels)*hostQueueBlockPer)
	var q QueueProbe
	for try := 1; ; try, block = try+1, 2*block {
		q, err = d.queueOnce(rec, k, o.QueueKernels, block)
		q.Tries = try
		if !errors.Is(err, errNotAhead) || try == hostQueueTries {
			break
		}
	}
	if errors.Is(err, errNotAhead) {
		return fmt.Errorf("after %d runs, the blocker doubled each time: %w", q.Tries, err)
	}
	if err != nil {
		return err
	}
	if q.Kernels != o.QueueKernels {
		return fmt.Errorf("queue probe: CUPTI recorded %d tiny kernels, %d were launched", q.Kernels, o.QueueKernels)
	}
	p.Queue, p.QueueGapNS = q, q.GapNS
	return nil
}

// queueOnce runs the queue probe once with a blocker of block: traced
// launches first, dropped, since the first traced launches after CUPTI's
// recording starts pay its setup, then the blocker and n tiny kernels.
func (d *Device) queueOnce(rec *recorder, k *hostKernel, n int, block time.Duration) (QueueProbe, error) {
	for i := 0; i < hostWarmRounds; i++ {
		if err := k.launch(d.stream, 0); err != nil {
			return QueueProbe{}, err
		}
	}
	if err := rec.discard(); err != nil {
		return QueueProbe{}, err
	}
	if err := k.launch(d.stream, block); err != nil {
		return QueueProbe{}, err
	}
	for i := 0; i < n; i++ {
		if err := k.launch(d.stream, 0); err != nil {
			return QueueProbe{}, err
		}
	}
	recs, err := drainAll(rec)
	if err != nil {
		return QueueProbe{}, err
	}
	return queueRun(recs)
}
