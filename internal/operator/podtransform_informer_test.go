package operator

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestPodTransform_InformerHandsOverSharedLists: client-go's informer runs the transform on
// each object before it stores it, and hands the stored object itself to the handlers, so
// two pods that list the same quantities reach the cache holding the very same maps. The
// NodeStore's requests memo keys on the identity of those maps (requestsmemo.go): this fails
// if the informer stops transforming what it stores and hands out, or hands out a copy.
func TestPodTransform_InformerHandsOverSharedLists(t *testing.T) {
	client := fake.NewClientset(everyList("a", "1", "1Gi"), everyList("b", "1", "1Gi"))
	inf := coreinformers.NewPodInformer(client, "", 0, toolscache.Indexers{})
	if err := inf.SetTransform(podTransform(newSharedResourceLists(), false)); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	delivered := map[string]*corev1.Pod{}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		p := obj.(*corev1.Pod)
		mu.Lock()
		delivered[p.Name] = p
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go inf.Run(ctx.Done())
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(delivered)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the informer handed over %d of 2 pods", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	a, b := delivered["a"], delivered["b"]
	mu.Unlock()
	for name, p := range map[string]*corev1.Pod{"a": a, "b": b} {
		if item, ok, _ := inf.GetStore().GetByKey("ns/" + name); !ok || item.(*corev1.Pod) != p {
			t.Errorf("pod %s: the handler was handed another object than the informer stores", name)
		}
	}
	lists := func(p *corev1.Pod) map[string]corev1.ResourceList {
		return map[string]corev1.ResourceList{
			"init requests": p.Spec.InitContainers[0].Resources.Requests, "main requests": p.Spec.Containers[0].Resources.Requests,
			"main limits": p.Spec.Containers[0].Resources.Limits, "sidecar requests": p.Spec.Containers[1].Resources.Requests,
			"pod requests": p.Spec.Resources.Requests, "overhead": p.Spec.Overhead, "status allocated": p.Status.AllocatedResources,
			"status requests": p.Status.Resources.Requests, "container allocated": p.Status.ContainerStatuses[0].AllocatedResources,
			"container actuated": p.Status.ContainerStatuses[0].Resources.Requests,
		}
	}
	la, lb := lists(a), lists(b)
	for where, rl := range la {
		if mapID(rl) != mapID(lb[where]) {
			t.Errorf("%s: the two pods the informer handed over hold different maps of the same content", where)
		}
	}
}
