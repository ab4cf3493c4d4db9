package debug

import (
	"io"
	"net/http"
	"time"
)

// DefaultDumpWriteTimeout is how long one write of a dump may wait for its client to read
// (Server.DumpWriteTimeout's default).
const DefaultDumpWriteTimeout = 30 * time.Second

// deadlineWriter writes to a response, pushing the connection's write deadline (through
// http.ResponseController) timeout past now before each write: a client that stops
// reading without closing its connection fails the write that waits on it once the
// deadline passes, instead of holding the writer (and the one-dump-at-a-time flag) until
// the connection dies. Time spent between writes (the dump reading the cache, resting) does
// not count: only a write waiting for the client does.
type deadlineWriter struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.rc.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		return 0, err
	}
	return d.w.Write(p)
}
