package e2e

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// elapsedWriter prefixes every line with the seconds since start, so that the log shows
// where the run's time goes (the progress log of the commands).
type elapsedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	bol   bool
}

// NewElapsedWriter returns a writer to w that prefixes every line with the seconds since now.
func NewElapsedWriter(w io.Writer) io.Writer {
	return &elapsedWriter{w: w, start: time.Now(), bol: true}
}

func (e *elapsedWriter) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b bytes.Buffer
	for _, c := range p {
		if e.bol {
			fmt.Fprintf(&b, "[%6.1fs] ", time.Since(e.start).Seconds())
			e.bol = false
		}
		b.WriteByte(c)
		e.bol = c == '\n'
	}
	if _, err := e.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
