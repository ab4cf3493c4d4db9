package operator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seed0f91f25e/multicache/internal/reconnect"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// BenchmarkReconnect_AfterAPIServerRestart measures, for a pod informer of client-go's own
// and one on a reconnect.ListerWatcher side by side, the time from the restarted API server
// answering to the informer holding a pod created at that moment (the API server is down
// for 5 s, as in a rolling restart). Run:
//
//	go test -run '^$' -bench BenchmarkReconnect_AfterAPIServerRestart -benchtime 3x ./internal/operator
func BenchmarkReconnect_AfterAPIServerRestart(b *testing.B) {
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := fmt.Sprintf("reconnect-bench-%d", time.Now().UnixNano())
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	subjects := []string{"client-go", "reconnect"}
	type arrival struct {
		name string
		at   time.Time
	}
	seen := map[string]chan arrival{}
	for _, name := range subjects {
		var lw toolscache.ListerWatcher = toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything())
		if name == "reconnect" {
			lw = reconnect.Wrap(lw, "Pod", logr.Discard())
		}
		inf := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, nil)
		ch := make(chan arrival, 16)
		seen[name] = ch
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { ch <- arrival{o.(*corev1.Pod).Name, time.Now()} },
		}); err != nil {
			b.Fatal(err)
		}
		go inf.Run(ctx.Done())
		toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	}
	total := map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := env.RestartAPIServer(ctx, func() error { time.Sleep(5 * time.Second); return nil }); err != nil {
			b.Fatal(err)
		}
		up := time.Now()
		name := fmt.Sprintf("after-%d", i)
		if err := env.Client.Create(ctx, ts.MakePod(ns, name, ts.OnNode("x"))); err != nil {
			b.Fatal(err)
		}
		for _, s := range subjects {
			for got := (arrival{}); got.name != name; {
				select {
				case got = <-seen[s]:
					if got.name == name {
						total[s] += got.at.Sub(up)
					}
				case <-time.After(2 * time.Minute):
					b.Fatalf("%s: the pod created after the restart never arrived", s)
				}
			}
		}
	}
	for _, s := range subjects {
		b.ReportMetric(total[s].Seconds()/float64(b.N), "s-"+s+"/op")
	}
	b.ReportMetric(float64(total["reconnect"])/float64(total["client-go"]), "ratio")
}
