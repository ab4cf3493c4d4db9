// Command informer is the floor of `make bench-e2e`: bare client-go shared informers for
// pods and nodes, reading protobuf and stripping managedFields as multicache does, and
// nothing else. With -kinds=multicache it watches every kind multicache's default stores
// watch instead (kinds.go): the built-in ones as protobuf, multicache's CRDs as JSON, as
// controller-runtime reads them.
// It serves its object counts as Prometheus text on -addr:
//
//	informer_objects{kind="pods"} 30000
//	informer_objects{kind="nodes"} 1000
//	informer_synced 1
//	informer_events_total{kind="Pod",op="update",result="ok"} 1800
//
// The pod event counters (add, update, delete, as multicache_events_total counts them) let
// the churn read this informer's lag exactly as it reads multicache's.
//
// and the Go profiler under /debug/pprof/.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// stripManagedFields drops managedFields before an object is stored, as multicache's
// informers do (controller-runtime's cache.TransformStripManagedFields).
func stripManagedFields(in any) (any, error) {
	if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	return in, nil
}

// counter counts the objects an informer holds: adds minus deletes.
type counter struct{ n atomic.Int64 }

func (c *counter) handler() toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.n.Add(1) },
		DeleteFunc: func(any) { c.n.Add(-1) },
	}
}

// opCounter counts the events an informer's handler received, per operation.
type opCounter struct{ add, update, del atomic.Int64 }

func (c *opCounter) handler() toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.add.Add(1) },
		UpdateFunc: func(any, any) { c.update.Add(1) },
		DeleteFunc: func(any) { c.del.Add(1) },
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	addr := flag.String("addr", "127.0.0.1:0", "address of the metrics and pprof server")
	kinds := flag.String("kinds", kindsPodsNodes, `the kinds watched: "pods,nodes", or "multicache" for every kind multicache's default stores watch`)
	flag.Parse()
	if err := run(*kubeconfig, *addr, *kinds); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(kubeconfig, addr, kinds string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	if kinds == kindsMulticache {
		// controller-runtime's client-side limits (ctrl.GetConfig), as multicache has: client-go's
		// default (5/s, burst 10) would queue the first requests of 15 informers.
		cfg.QPS, cfg.Burst = 20, 30
	}
	crdConfig := rest.CopyConfig(cfg) // multicache's CRDs are served as JSON only
	// Protobuf, as kube-scheduler and controller-runtime (multicache) read built-in kinds.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTransform(stripManagedFields))
	watched, err := informersOf(kinds, factory, crdConfig)
	if err != nil {
		return err
	}
	counters := make([]counter, len(watched))
	var podEvents opCounter
	for i, w := range watched {
		if _, err := w.informer.AddEventHandler(counters[i].handler()); err != nil {
			return err
		}
		if w.name == "pods" {
			if _, err := w.informer.AddEventHandler(podEvents.handler()); err != nil {
				return err
			}
		}
	}
	var synced atomic.Bool

	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		s := 0
		if synced.Load() {
			s = 1
		}
		for i, k := range watched {
			fmt.Fprintf(w, "informer_objects{kind=%q} %d\n", k.name, counters[i].n.Load())
		}
		fmt.Fprintf(w, "informer_synced %d\n", s)
		for _, op := range []struct {
			name string
			n    *atomic.Int64
		}{{"add", &podEvents.add}, {"update", &podEvents.update}, {"delete", &podEvents.del}} {
			fmt.Fprintf(w, "informer_events_total{kind=\"Pod\",op=%q,result=\"ok\"} %d\n", op.name, op.n.Load())
		}
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()

	factory.Start(ctx.Done())
	for _, w := range watched {
		if w.own {
			go w.informer.RunWithContext(ctx)
		}
	}
	for _, w := range watched {
		if !toolscache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) {
			return fmt.Errorf("%s did not sync", w.name)
		}
	}
	synced.Store(true)
	<-ctx.Done()
	factory.Shutdown()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
