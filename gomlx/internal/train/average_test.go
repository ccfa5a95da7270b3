package train

import (
	"errors"
	"slices"
	"testing"

	"github.com/salsaopt/salsa/schedule"
)

// fakeAverager returns cells at the last iterate and at the average, and
// records how the average ended.
type fakeAverager struct {
	last, avg [2][]float64 // loss, acc
	at        bool
	ends      []bool
	failAvg   error
}

func (f *fakeAverager) BeginAverage() error { f.at = true; return nil }
func (f *fakeAverager) EndAverage(keep bool) error {
	f.at, f.ends = false, append(f.ends, keep)
	return nil
}
func (f *fakeAverager) EvaluateCells(*Split) ([]float64, []float64, error) {
	if f.at {
		return f.avg[0], f.avg[1], f.failAvg
	}
	return f.last[0], f.last[1], nil
}

// fakePicker records the gains it is given and keeps the average when their
// sum is positive; pickAverage calls none of the Scheduler's methods.
type fakePicker struct {
	schedule.Scheduler
	gain   []float64
	metric string
}

func (p *fakePicker) Averages() bool { return true }
func (p *fakePicker) PickAverage(gain []float64, metric string) (schedule.Event, error) {
	p.gain, p.metric = gain, metric
	var s float64
	for _, g := range gain {
		s += g
	}
	return schedule.Event{Kind: schedule.KindAverage, Accept: s > 0, Reason: metric}, nil
}

// TestPickAverage: on a text the gain of a cell is the last iterate's loss
// minus the average's; on images the average's right predictions minus the
// last iterate's; the engine ends at the one picked, and after a failed
// evaluation at the last iterate.
func TestPickAverage(t *testing.T) {
	for _, c := range []struct {
		text   bool
		want   []float64
		metric string
		keep   bool
	}{
		{true, []float64{0.5, -0.25}, "loss", true},
		{false, []float64{-1, 0}, "accuracy", false},
	} {
		e := &fakeAverager{last: [2][]float64{{2, 1}, {1, 0}}, avg: [2][]float64{{1.5, 1.25}, {0, 0}}}
		p := &fakePicker{}
		ev, err := pickAverage(p, e, nil, c.text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.gain, c.want) || p.metric != c.metric || ev.Accept != c.keep || !slices.Equal(e.ends, []bool{c.keep}) {
			t.Errorf("text %v: gains %v (%s), kept %v, ends %v; want %v (%s), %v", c.text, p.gain, p.metric, ev.Accept, e.ends, c.want, c.metric, c.keep)
		}
	}
	e := &fakeAverager{last: [2][]float64{{2, 1}, {1, 0}}, avg: [2][]float64{{1}, {0}}}
	if _, err := pickAverage(&fakePicker{}, e, nil, true); err == nil || !slices.Equal(e.ends, []bool{false}) {
		t.Errorf("cells of another count: err %v, ends %v; want an error and the last iterate back", err, e.ends)
	}
	e = &fakeAverager{failAvg: errors.New("boom")}
	if _, err := pickAverage(&fakePicker{}, e, nil, true); err == nil || !slices.Equal(e.ends, []bool{false}) {
		t.Errorf("a failed evaluation: err %v, ends %v; want an error and the last iterate back", err, e.ends)
	}
}
