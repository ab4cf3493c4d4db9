// Command informer is the floor of `make bench-e2e`: a bare client-go shared informer for
// pods and nodes, reading protobuf and stripping managedFields as multicache does, and
// nothing else.
// It serves its object counts as Prometheus text on -addr:
//
//	informer_objects{kind="pods"} 30000
//	informer_objects{kind="nodes"} 1000
//	informer_synced 1
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

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	addr := flag.String("addr", "127.0.0.1:0", "address of the metrics and pprof server")
	contentType := flag.String("content-type", "application/vnd.kubernetes.protobuf",
		`wire format: protobuf, as kube-scheduler and controller-runtime (multicache) use for built-in kinds; "" for client-go's default, JSON`)
	flag.Parse()
	if err := run(*kubeconfig, *addr, *contentType); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(kubeconfig, addr, contentType string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.ContentType = contentType
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTransform(stripManagedFields))
	var pods, nodes counter
	var synced atomic.Bool
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(pods.handler()); err != nil {
		return err
	}
	if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(nodes.handler()); err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		s := 0
		if synced.Load() {
			s = 1
		}
		fmt.Fprintf(w, "informer_objects{kind=\"pods\"} %d\ninformer_objects{kind=\"nodes\"} %d\ninformer_synced %d\n",
			pods.n.Load(), nodes.n.Load(), s)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}()

	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("%v did not sync", typ)
		}
	}
	synced.Store(true)
	<-ctx.Done()
	factory.Shutdown()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
