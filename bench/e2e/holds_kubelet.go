package e2e

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Kubelets plays the kubelet of every node, for pods only and without containers: a pod
// bound to a node is reported Running and Ready (status subresource), so that the
// Deployment's rollout progresses; a pod being deleted is removed (grace period 0) Delay
// after the run first saw its deletionTimestamp, as a kubelet does once its containers
// stopped. It also records every pod it sees (PodIndex) and when each one landed.
type Kubelets struct {
	client    kubernetes.Interface
	namespace string
	// Delay is how long a pod being deleted stays before the kubelet removes it.
	Delay time.Duration

	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]

	mu       sync.Mutex
	pods     map[string]PodRecord
	holds    map[string]PodRecord
	landed   map[string]time.Time
	deleting map[string]time.Time
	// lastLanded is when the last pod was first seen bound; lastRemoved when the last delete returned.
	lastLanded, lastRemoved time.Time
	errors                  int
	lastErr                 error
}

// NewKubelets returns the kubelets of the pods of namespace.
func NewKubelets(client kubernetes.Interface, namespace string, delay time.Duration) *Kubelets {
	return &Kubelets{
		client: client, namespace: namespace, Delay: delay,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		pods:  map[string]PodRecord{}, holds: map[string]PodRecord{},
		landed: map[string]time.Time{}, deleting: map[string]time.Time{},
	}
}

// Start runs the informer and workers until ctx is done, and waits for the informer's sync.
func (k *Kubelets) Start(ctx context.Context, workers int) error {
	factory := informers.NewSharedInformerFactoryWithOptions(k.client, 0, informers.WithNamespace(k.namespace))
	k.informer = factory.Core().V1().Pods().Informer()
	if _, err := k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), k.informer.HasSynced) {
		return ctx.Err()
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	for range workers {
		go func() {
			for k.next(ctx) {
			}
		}()
	}
	return nil
}

func (k *Kubelets) enqueue(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	k.mu.Lock()
	if _, seen := k.pods[key]; !seen {
		rec := PodRecord{UID: pod.UID, MilliCPU: store.PodRequests(pod).MilliCPU,
			Hold: pod.Namespace + "/" + reservationstore.ReplacementName(pod)}
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			rec.ReplicaSet = ref.UID
		}
		k.pods[key], k.holds[rec.Hold] = rec, rec
	}
	now := time.Now()
	if _, ok := k.landed[key]; !ok && pod.Spec.NodeName != "" {
		k.landed[key], k.lastLanded = now, now
	}
	if _, ok := k.deleting[key]; !ok && pod.DeletionTimestamp != nil {
		k.deleting[key] = now
	}
	k.mu.Unlock()
	k.queue.Add(key)
}

// next handles one pod: removes it once it has been deleting for Delay, else reports it
// running and ready once it is bound.
func (k *Kubelets) next(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	obj, exists, err := k.informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		k.queue.Forget(key)
		return true
	}
	pod := obj.(*corev1.Pod)
	switch {
	case pod.DeletionTimestamp != nil:
		k.mu.Lock()
		wait := k.Delay - time.Since(k.deleting[key])
		k.mu.Unlock()
		if wait > 0 {
			k.queue.AddAfter(key, wait)
			return true
		}
		err = k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To(int64(0)), Preconditions: &metav1.Preconditions{UID: &pod.UID},
		})
		if err == nil || apierrors.IsNotFound(err) {
			k.mu.Lock()
			k.lastRemoved = time.Now()
			k.mu.Unlock()
			err = nil
		}
	case pod.Spec.NodeName != "" && !podReady(pod):
		_, err = k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, running(pod), metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			err = nil
		}
	}
	if err != nil && ctx.Err() == nil {
		k.mu.Lock()
		k.errors++
		k.lastErr = err
		k.mu.Unlock()
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

// running returns a copy of pod reported Running, with its containers started and ready.
func running(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setCondition(p, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return p
}

func setCondition(p *corev1.Pod, c corev1.PodCondition) {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == c.Type {
			p.Status.Conditions[i] = c
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Pod implements PodIndex.
func (k *Kubelets) Pod(key string) (PodRecord, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.pods[key]
	return r, ok
}

// ByHold implements PodIndex.
func (k *Kubelets) ByHold(key string) (PodRecord, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r, ok := k.holds[key]
	return r, ok
}

// Landmarks returns when the last pod was first seen bound, when the last delete returned,
// how many writes failed (and were retried) and the last error.
func (k *Kubelets) Landmarks() (lastLanded, lastRemoved time.Time, errors int, lastErr error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastLanded, k.lastRemoved, k.errors, k.lastErr
}
