package controllers

import (
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// lazyLogConstructor is the LogConstructor of the feed controllers, with the fields of
// controller-runtime's own (builder.go: controller, controllerGroup, controllerKind, then
// per request the kind's object reference, namespace and name). controller-runtime builds a
// logger for every reconcile; with zap, each WithValues clones the logger and encodes its
// fields at once, which at a cold start of 150,000 pods cost more CPU than applying the
// events. A feed reconcile almost never logs, so the values are kept aside and encoded only
// when a line is written.
func lazyLogConstructor(base logr.Logger, controller string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	if base.GetSink() == nil {
		return func(*reconcile.Request) logr.Logger { return base }
	}
	log := logr.New(&lazyValuesSink{sink: base.GetSink()}).WithValues("controller", controller)
	if !gvk.Empty() {
		log = log.WithValues("controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	}
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		l := log
		if !gvk.Empty() {
			l = l.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name))
		}
		return l.WithValues("namespace", req.Namespace, "name", req.Name)
	}
}

// lazyValuesSink is a logr.LogSink that defers WithValues to the moment a line is logged.
type lazyValuesSink struct {
	sink   logr.LogSink
	values []any
}

var _ logr.CallDepthLogSink = (*lazyValuesSink)(nil)

// Init implements logr.LogSink (the wrapped sink was initialised by its own logger).
func (s *lazyValuesSink) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink.
func (s *lazyValuesSink) Enabled(level int) bool { return s.sink.Enabled(level) }

// Info implements logr.LogSink.
func (s *lazyValuesSink) Info(level int, msg string, keysAndValues ...any) {
	s.resolved().Info(level, msg, keysAndValues...)
}

// Error implements logr.LogSink.
func (s *lazyValuesSink) Error(err error, msg string, keysAndValues ...any) {
	s.resolved().Error(err, msg, keysAndValues...)
}

// WithValues implements logr.LogSink: the values are only remembered.
func (s *lazyValuesSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &lazyValuesSink{sink: s.sink, values: append(slices.Clip(s.values), keysAndValues...)}
}

// WithName implements logr.LogSink.
func (s *lazyValuesSink) WithName(name string) logr.LogSink {
	return &lazyValuesSink{sink: s.sink.WithName(name), values: s.values}
}

// WithCallDepth implements logr.CallDepthLogSink.
func (s *lazyValuesSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return &lazyValuesSink{sink: cd.WithCallDepth(depth), values: s.values}
	}
	return s
}

// resolved is the wrapped sink with the values applied, one frame deeper (this sink's).
func (s *lazyValuesSink) resolved() logr.LogSink {
	sink := s.sink
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	if len(s.values) > 0 {
		sink = sink.WithValues(s.values...)
	}
	return sink
}
