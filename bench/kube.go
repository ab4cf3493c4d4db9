package bench

import (
	"context"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubecache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// kubeCache is kube-scheduler's cache (v1.37), as the scheduler builds it: no API
// dispatcher, the GenericWorkload and CompositePodGroup gates off (their defaults).
type kubeCache struct {
	c      kubecache.Cache
	log    klog.Logger
	cancel context.CancelFunc
}

var _ Cache = (*kubeCache)(nil)

// NewKubeCache returns an empty kube-scheduler cache. Its metrics goroutine stops on Close.
// The scheduler's metrics are registered first, as kube-scheduler does at start-up: the
// cache's goroutine reports its size through them.
func NewKubeCache() Cache {
	schedmetrics.Register()
	ctx, cancel := context.WithCancel(context.Background())
	return &kubeCache{c: kubecache.New(ctx, nil, false, false), log: logr.Discard(), cancel: cancel}
}

// AddNode implements Cache.
func (k *kubeCache) AddNode(node *corev1.Node) error {
	k.c.AddNode(k.log, node)
	return nil
}

// AddPod implements Cache.
func (k *kubeCache) AddPod(pod *corev1.Pod) error { return k.c.AddPod(k.log, pod) }

// UpdatePod implements Cache.
func (k *kubeCache) UpdatePod(oldPod, newPod *corev1.Pod) error {
	return k.c.UpdatePod(k.log, oldPod, newPod)
}

// RemovePod implements Cache.
func (k *kubeCache) RemovePod(pod *corev1.Pod) error { return k.c.RemovePod(k.log, pod) }

// AssumePod implements Cache with AssumePod alone: kube-scheduler's cache of v1.37 has no FinishBinding (and
// no expiry of assumed pods), so there is no binding to finish.
func (k *kubeCache) AssumePod(pod *corev1.Pod) error { return k.c.AssumePod(k.log, pod) }

// ForgetPod implements Cache.
func (k *kubeCache) ForgetPod(pod *corev1.Pod) error { return k.c.ForgetPod(k.log, pod) }

// NewSnapshot implements Cache: kube-scheduler's empty snapshot.
func (k *kubeCache) NewSnapshot() Snapshot { return kubecache.NewEmptySnapshot() }

// UpdateSnapshot implements Cache.
func (k *kubeCache) UpdateSnapshot(snap Snapshot) error {
	return k.c.UpdateSnapshot(k.log, snap.(*kubecache.Snapshot))
}

// SnapshotLen implements Cache.
func (k *kubeCache) SnapshotLen(snap Snapshot) int {
	list, _ := snap.(*kubecache.Snapshot).List()
	return len(list)
}

// GetPod implements Cache.
func (k *kubeCache) GetPod(pod *corev1.Pod) (*corev1.Pod, error) { return k.c.GetPod(pod) }

// Close implements Cache: it stops the metrics goroutine.
func (k *kubeCache) Close() { k.cancel() }
