package chaos

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// LabelSet marks the pods of a StatefulSet of the suite (its selector).
const LabelSet = "chaos.multicache.dev/set"

// statefulSet is a StatefulSet whose pods the suite recreates itself, as the StatefulSet
// controller would (no kube-controller-manager runs): the same name and node, a new UID.
// Its pods ask to keep their place when deleted (reserve-on-delete), so every recreation
// goes through a hold and the Reservation the leader creates for the replacement.
type statefulSet struct {
	name  string
	uid   types.UID
	nodes []string
}

// newStatefulSet creates a StatefulSet of n pods spread over nodes, and its pods.
func (w *Workload) newStatefulSet(ctx context.Context, n int, nodes []string) (*statefulSet, error) {
	name := w.name("set")
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name,
			Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(int32(n)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelSet: name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelSet: name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "chaos"}}},
			},
		},
	}
	if err := w.c.Create(ctx, set); err != nil {
		return nil, fmt.Errorf("statefulset %s: %w", name, err)
	}
	s := &statefulSet{name: name, uid: set.UID}
	for i := range n {
		s.nodes = append(s.nodes, nodes[i%len(nodes)])
		if err := w.recreate(ctx, s, i); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// pod is the set's pod of ordinal i, to create (no UID).
func (s *statefulSet) pod(ns string, i int) *corev1.Pod {
	p := ts.MakePod(ns, fmt.Sprintf("%s-%d", s.name, i), ts.Requests(podCPU, podMemory), ts.OnNode(s.nodes[i]),
		ts.WithLabels(LabelSet, s.name), ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"))
	p.UID = ""
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.name,
		UID: s.uid, Controller: ptr.To(true)}}
	return p
}

// recreate deletes the set's pod of ordinal i (if it exists) and creates it again under
// the same name: the namesake has a new UID.
func (w *Workload) recreate(ctx context.Context, s *statefulSet, i int) error {
	p := s.pod(w.ns, i)
	if err := w.deleteNow(ctx, p.DeepCopy()); err != nil {
		return fmt.Errorf("deleting %s: %w", p.Name, err)
	}
	// Already there while the old one is still being removed.
	var err error
	poll(30*time.Second, 50*time.Millisecond, func() bool {
		err = w.c.Create(ctx, p.DeepCopy())
		return !apierrors.IsAlreadyExists(err) || ctx.Err() != nil
	})
	w.count("statefulset pod recreated", err)
	return err
}
