package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/salsaopt/salsa/gomlx/internal/train"
)

// Progress is the one display of a whole grid: on a terminal a single line
// that is redrawn ("compare: 7/12 runs done, running salsa-lr0.01-s2 3/30,
// …"), otherwise one line per finished run.
type Progress struct {
	w   io.Writer
	tty bool

	mu          sync.Mutex
	total, done int
	running     []*Job
	epoch       map[*Job]string
	last        time.Time
	width       int // of the line drawn last
}

// NewProgress reports to w; tty says that w is a terminal.
func NewProgress(w io.Writer, tty bool) *Progress {
	return &Progress{w: w, tty: tty, epoch: map[*Job]string{}}
}

func (p *Progress) start(total, skipped int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.done = total, skipped
	p.draw(true)
}

func (p *Progress) begin(j *Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, j)
	p.epoch[j] = "starting"
	if j.state == stateResume {
		p.epoch[j] = "resuming"
	}
	p.draw(true)
}

func (p *Progress) step(j *Job, epoch, epochs int) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch[j] = fmt.Sprintf("epoch %d/%d", epoch, epochs)
	p.draw(false)
}

func (p *Progress) finished(j *Job, res *train.Result, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.running {
		if r == j {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	delete(p.epoch, j)
	var msg string
	switch {
	case err != nil:
		p.done++
		msg = fmt.Sprintf("%s failed: %v", j.Name, err)
	case res.Interrupted:
		msg = fmt.Sprintf("%s interrupted after step %d: checkpoint written, it resumes when the command runs again", j.Name, res.Steps)
	case res.Stopped:
		msg = fmt.Sprintf("%s stopped after step %d (--max-steps): it resumes when the command runs again", j.Name, res.Steps)
	default:
		p.done++
		metric := fmt.Sprintf("test_acc=%.4f", res.TestAcc)
		if !math.IsNaN(res.TestPPL) && res.TestPPL != 0 {
			metric = fmt.Sprintf("test_ppl=%.3f", res.TestPPL)
		}
		verb := "trained"
		if j.state == stateResume {
			verb = "resumed and finished"
		}
		msg = fmt.Sprintf("%s %s: %s after %d epochs, %.1f s", j.Name, verb, metric, res.Epochs, res.Seconds)
	}
	if p.tty {
		if err == nil && !res.Stopped {
			p.draw(true) // a finished run shows in the count
			return
		}
		p.clear()
	}
	fmt.Fprintf(p.w, "compare: %d/%d runs done: %s\n", p.done, p.total, msg)
	p.draw(true)
}

func (p *Progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.clear()
	}
}

func (p *Progress) clear() {
	if p.width > 0 {
		fmt.Fprint(p.w, "\r\033[K")
		p.width = 0
	}
}

// draw redraws the terminal's line, at most 10 times a second unless now.
func (p *Progress) draw(now bool) {
	if !p.tty || !now && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	line := fmt.Sprintf("compare: %d/%d runs done", p.done, p.total)
	if len(p.running) > 0 {
		var rs []string
		for _, j := range p.running {
			rs = append(rs, j.Name+" "+p.epoch[j])
		}
		line += ", running " + strings.Join(rs, ", ")
	}
	const maxWidth = 150
	if r := []rune(line); len(r) > maxWidth {
		line = string(r[:maxWidth-1]) + "…"
	}
	fmt.Fprint(p.w, "\r"+line+"\033[K")
	p.width = len(line)
}
