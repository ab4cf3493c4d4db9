package multicache

import "github.com/go-logr/logr"

// startupNoise are controller-runtime's per-controller start messages: dozens of lines
// (one per source of every controller) that, with --local, would scroll the banner away.
var startupNoise = map[string]bool{
	"Starting EventSource": true,
	"Starting Controller":  true,
	"Starting workers":     true,
}

// quietStartup logs controller-runtime's start messages one level down (debug, shown with
// --zap-log-level=debug) and every other message as it is.
type quietStartup struct{ logr.LogSink }

func (q quietStartup) Info(level int, msg string, kv ...any) {
	if startupNoise[msg] {
		if !q.LogSink.Enabled(level + 1) {
			return
		}
		level++
	}
	q.LogSink.Info(level, msg, kv...)
}

func (q quietStartup) WithValues(kv ...any) logr.LogSink {
	return quietStartup{q.LogSink.WithValues(kv...)}
}

func (q quietStartup) WithName(name string) logr.LogSink {
	return quietStartup{q.LogSink.WithName(name)}
}

// Init counts the wrapper's frame, so that the caller a log line names is the caller's.
func (q quietStartup) Init(info logr.RuntimeInfo) {
	info.CallDepth++
	q.LogSink.Init(info)
}

// WithCallDepth passes a caller's extra depth on to the wrapped sink.
func (q quietStartup) WithCallDepth(depth int) logr.LogSink {
	if s, ok := q.LogSink.(logr.CallDepthLogSink); ok {
		return quietStartup{s.WithCallDepth(depth)}
	}
	return q
}
