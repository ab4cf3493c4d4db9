package main

import (
	"context"
	"flag"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/operator"
)

// Annotations a pod of the simulated scheduler may carry (the chaos suite sets them).
const (
	// NodeHintAnnotation names the node to put the pod on (else a random node).
	NodeHintAnnotation = "chaos.multicache.dev/node"
	// BindDelayAnnotation is how long to wait between FinishBinding and the binding call.
	BindDelayAnnotation = "chaos.multicache.dev/bind-delay"
)

// The simulated scheduler binds after up to bindDelay; slowFraction of the binds wait
// --chaos-slow-bind instead, and forgetFraction of the assumptions are forgotten.
const (
	bindDelay      = 200 * time.Millisecond
	slowFraction   = 0.1
	forgetFraction = 0.05
	workers        = 4
)

// schedulerOptions configure the simulated scheduler.
type schedulerOptions struct {
	// name is the spec.schedulerName it serves; empty disables it.
	name string
	// slowBind is the wait of a slow bind.
	slowBind time.Duration
	seed     uint64
}

func (o *schedulerOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.name, "chaos-scheduler-name", "", "Run the simulated scheduler for pods with this spec.schedulerName (empty: no scheduler).")
	fs.DurationVar(&o.slowBind, "chaos-slow-bind", 5*time.Second, "Wait of a slow bind (set it above --pod-assumed-ttl).")
	fs.Uint64Var(&o.seed, "chaos-seed", 1, "Seed of the scheduler's random choices.")
}

// scheduler is a minimal scheduler on top of the cache: for each unbound pod of its name it
// picks a node, assumes the pod, finishes binding and binds it through the API (or forgets
// it), the way kube-scheduler drives its own cache.
type scheduler struct {
	opts   schedulerOptions
	cache  *handler.Handler
	reader ctrlcache.Cache
	cs     kubernetes.Interface
	log    logr.Logger
	queue  workqueue.TypedRateLimitingInterface[types.NamespacedName]

	mu       sync.Mutex
	rng      *rand.Rand
	inFlight map[types.NamespacedName]bool
}

func newScheduler(op *operator.Operator, cfg *rest.Config, opts schedulerOptions, log logr.Logger) (*scheduler, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &scheduler{
		opts: opts, cache: op.Cache, reader: op.Manager.GetCache(), cs: cs, log: log,
		queue:    workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()),
		rng:      rand.New(rand.NewPCG(opts.seed, uint64(time.Now().UnixNano()))),
		inFlight: map[types.NamespacedName]bool{},
	}, nil
}

// Start runs the scheduler until ctx is done (a manager runnable started after catch-up).
func (s *scheduler) Start(ctx context.Context) error {
	informer, err := s.reader.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	enqueue := func(obj any) {
		if pod, ok := obj.(*corev1.Pod); ok && s.mine(pod) {
			s.queue.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s.next(ctx) {
			}
		}()
	}
	s.log.Info("simulated scheduler started", "schedulerName", s.opts.name)
	<-ctx.Done()
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

// mine reports whether the pod is unbound and for this scheduler.
func (s *scheduler) mine(pod *corev1.Pod) bool {
	return pod.Spec.SchedulerName == s.opts.name && pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil
}

func (s *scheduler) next(ctx context.Context) bool {
	key, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(key)
	if retry := s.schedule(ctx, key); retry {
		s.queue.AddRateLimited(key)
	} else {
		s.queue.Forget(key)
	}
	return true
}

// schedule assumes one pod and starts its binding; it reports whether to try again later.
func (s *scheduler) schedule(ctx context.Context, key types.NamespacedName) bool {
	s.mu.Lock()
	busy := s.inFlight[key]
	s.mu.Unlock()
	if busy {
		return false // the binding in flight requeues it if it fails
	}
	shared := &corev1.Pod{}
	if err := s.reader.Get(ctx, key, shared); err != nil {
		return !apierrors.IsNotFound(err)
	}
	if !s.mine(shared) {
		return false
	}
	node := shared.Annotations[NodeHintAnnotation]
	if node == "" {
		if node = s.randomNode(ctx); node == "" {
			return true
		}
	}
	assumed := shared.DeepCopy()
	assumed.Spec.NodeName = node
	if err := s.cache.AssumePod(assumed); err != nil {
		s.log.V(1).Info("assume refused", "pod", key, "err", err.Error())
		return true
	}
	s.mu.Lock()
	forget := s.rng.Float64() < forgetFraction
	delay := time.Duration(s.rng.Int64N(int64(bindDelay) + 1))
	slow := s.rng.Float64() < slowFraction
	s.mu.Unlock()
	if forget {
		if err := s.cache.ForgetPod(assumed); err != nil {
			s.log.Info("forget refused", "pod", key, "err", err.Error())
		}
		s.log.Info("forgot an assumed pod instead of binding it", "pod", key, "node", node)
		return true
	}
	if err := s.cache.FinishBinding(assumed); err != nil {
		s.log.Info("finish binding refused", "pod", key, "err", err.Error())
	}
	if slow {
		delay = s.opts.slowBind
	}
	if d, err := time.ParseDuration(shared.Annotations[BindDelayAnnotation]); err == nil {
		delay, slow = d, true
	}
	s.mu.Lock()
	s.inFlight[key] = true
	s.mu.Unlock()
	go s.bind(ctx, assumed, delay, slow)
	return false
}

// bind waits, then binds the pod through the binding subresource; on failure it forgets
// the assumption (refused when it already expired) and requeues the pod.
func (s *scheduler) bind(ctx context.Context, assumed *corev1.Pod, delay time.Duration, slow bool) {
	key := types.NamespacedName{Namespace: assumed.Namespace, Name: assumed.Name}
	defer func() {
		s.mu.Lock()
		delete(s.inFlight, key)
		s.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: assumed.Namespace, Name: assumed.Name, UID: assumed.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: assumed.Spec.NodeName},
	}
	err := s.cs.CoreV1().Pods(assumed.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
	if err != nil {
		ferr := s.cache.ForgetPod(assumed)
		s.log.Info("binding failed; assumption forgotten", "pod", key, "node", assumed.Spec.NodeName,
			"err", err.Error(), "forgetErr", ferr)
		s.queue.AddAfter(key, time.Second)
		return
	}
	s.log.Info("bound", "pod", key, "node", assumed.Spec.NodeName, "delay", delay.String(), "slow", slow)
}

// randomNode returns one of the cluster's nodes.
func (s *scheduler) randomNode(ctx context.Context) string {
	var list corev1.NodeList
	if err := s.reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil || len(list.Items) == 0 {
		return ""
	}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	sort.Strings(names)
	s.mu.Lock()
	defer s.mu.Unlock()
	return names[s.rng.IntN(len(names))]
}
