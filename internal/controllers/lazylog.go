package controllers

import (
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// lazyLogConstructor is the LogConstructor of the feed controllers, with the fields of
// controller-runtime's own (builder.go: controller, controllerGroup, controllerKind, then
// per request the kind's object reference, namespace and name). controller-runtime builds a
// logger for every reconcile; with zap, each WithValues clones the logger and encodes its
// fields at once, which at a cold start of 150,000 pods cost more CPU than applying the
// events. A feed reconcile almost never logs, so the values are kept aside and encoded only
// when a line is written: a request's logger is one small node that holds the request, and
// each WithValues after it (controller-runtime's reconcileID) one more node pointing to it.
func lazyLogConstructor(base logr.Logger, controller string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	if base.GetSink() == nil {
		return func(*reconcile.Request) logr.Logger { return base }
	}
	root := &lazyValuesSink{sink: base.GetSink()}
	log := logr.New(root).WithValues("controller", controller)
	if !gvk.Empty() {
		log = log.WithValues("controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	}
	parent := log.GetSink().(*lazyValuesSink)
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithSink(&lazyValuesSink{sink: parent.sink, parent: parent, req: &lazyRequest{kind: gvk.Kind, key: req.NamespacedName}})
	}
}

// lazyRequest is the request a feed's logger was built for; its values are made when a line
// is written (the kind's object reference unless the kind is unknown, namespace, name).
type lazyRequest struct {
	kind string
	key  types.NamespacedName
}

func (r *lazyRequest) values() []any {
	var kv []any
	if r.kind != "" {
		kv = append(kv, r.kind, klog.KRef(r.key.Namespace, r.key.Name))
	}
	return append(kv, "namespace", r.key.Namespace, "name", r.key.Name)
}

// lazyValuesSink is a logr.LogSink that defers WithValues to the moment a line is logged.
// Its values come after its parent's (the logger it was derived from).
type lazyValuesSink struct {
	sink   logr.LogSink
	parent *lazyValuesSink
	values []any
	// req, when set, stands for the values of a reconcile request.
	req *lazyRequest
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

// WithValues implements logr.LogSink: the values are only remembered (copied: the caller
// may reuse its slice).
func (s *lazyValuesSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &lazyValuesSink{sink: s.sink, parent: s, values: slices.Clone(keysAndValues)}
}

// WithName implements logr.LogSink.
func (s *lazyValuesSink) WithName(name string) logr.LogSink {
	return &lazyValuesSink{sink: s.sink.WithName(name), parent: s.parent, values: s.values, req: s.req}
}

// WithCallDepth implements logr.CallDepthLogSink.
func (s *lazyValuesSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return &lazyValuesSink{sink: cd.WithCallDepth(depth), parent: s.parent, values: s.values, req: s.req}
	}
	return s
}

// allValues is the values of s's ancestors, then its own, in the order they were given.
func (s *lazyValuesSink) allValues() []any {
	var chain []*lazyValuesSink
	for n := s; n != nil; n = n.parent {
		chain = append(chain, n)
	}
	var kv []any
	for _, n := range slices.Backward(chain) {
		if n.req != nil {
			kv = append(kv, n.req.values()...)
		}
		kv = append(kv, n.values...)
	}
	return kv
}

// resolved is the wrapped sink with the values applied, one frame deeper (this sink's).
func (s *lazyValuesSink) resolved() logr.LogSink {
	sink := s.sink
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	if kv := s.allValues(); len(kv) > 0 {
		sink = sink.WithValues(kv...)
	}
	return sink
}
