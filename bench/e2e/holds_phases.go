package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// runHoldsPhase writes one change and waits until the API shows the Deployment complete:
// want pods, every one of the latest revision, ready and available, none being deleted.
func runHoldsPhase(ctx context.Context, c client.Client, kubelets *Kubelets, smp *holdSampler, name string,
	change func(context.Context) error, want int, cfg HoldsConfig) (HoldsPhase, error) {
	ph := HoldsPhase{Name: name}
	smp.setPhase(name)
	ph.Start = time.Now()
	if err := change(ctx); err != nil {
		return ph, err
	}
	done, err := waitRolledOut(ctx, c, want, cfg.PhaseTimeout)
	if err != nil {
		return ph, err
	}
	smp.setPhase("settle-" + name)
	ph.Done = done
	landed, removed, _, _ := kubelets.Landmarks()
	if landed.After(ph.Start) {
		ph.LastLanded = landed
	}
	if removed.After(ph.Start) {
		ph.LastRemoved = removed
	}
	ph.End = ph.Done
	if last := later(ph.LastLanded, ph.LastRemoved); !last.IsZero() {
		ph.End = last
	}
	return ph, nil
}

// patchDeployment returns a change of the run's Deployment.
func patchDeployment(c client.Client, change func(*appsv1.Deployment)) func(context.Context) error {
	return func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: holdsNamespace, Name: holdsApp}, &d); err != nil {
			return err
		}
		patch := client.MergeFrom(d.DeepCopy())
		change(&d)
		return c.Patch(ctx, &d, patch)
	}
}

// forceDelete returns the deletion of n of the Deployment's pods (the first by name) with
// grace period 0, as `kubectl delete --force` does: each is gone at once, with no
// deletionTimestamp first, and its ReplicaSet creates a replacement after.
func forceDelete(c client.Client, n int) func(context.Context) error {
	return func(ctx context.Context) error {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(holdsNamespace)); err != nil {
			return err
		}
		slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		if len(pods.Items) < n {
			return fmt.Errorf("%d pods to force-delete, only %d exist", n, len(pods.Items))
		}
		for i := range pods.Items[:n] {
			if err := c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); err != nil {
				return fmt.Errorf("force-deleting pod %s: %w", pods.Items[i].Name, err)
			}
		}
		return nil
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waitRolledOut polls until the Deployment's status and its pods show want pods of its
// latest revision, available, and no pod being deleted; it returns the time of the list
// that showed it.
func waitRolledOut(ctx context.Context, c client.Client, want int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	detail := ""
	for {
		at := time.Now()
		var d appsv1.Deployment
		var pods corev1.PodList
		err := c.Get(ctx, client.ObjectKey{Namespace: holdsNamespace, Name: holdsApp}, &d)
		if err == nil {
			err = c.List(ctx, &pods, client.InNamespace(holdsNamespace))
		}
		if err == nil {
			deleting, bound, ready := 0, 0, 0
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil {
					deleting++
				}
				if p.Spec.NodeName != "" {
					bound++
				}
				if podReady(p) {
					ready++
				}
			}
			st := d.Status
			w := int32(want)
			if st.ObservedGeneration >= d.Generation && st.Replicas == w && st.UpdatedReplicas == w &&
				st.AvailableReplicas == w && len(pods.Items) == want && bound == want && ready == want && deleting == 0 {
				return at, nil
			}
			detail = fmt.Sprintf("status replicas=%d updated=%d available=%d; %d pods, %d bound, %d ready, %d being deleted",
				st.Replicas, st.UpdatedReplicas, st.AvailableReplicas, len(pods.Items), bound, ready, deleting)
		} else {
			detail = err.Error()
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("not rolled out to %d pods after %v: %s", want, timeout, detail)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// holdsDeployment is the run's Deployment: every pod annotated reserve-on-delete.
func holdsDeployment(cfg HoldsConfig) *appsv1.Deployment {
	labels := map[string]string{labelApp: holdsApp}
	surge, unavailable := intstr.Parse(cfg.MaxSurge), intstr.Parse(cfg.MaxUnavailable)
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cfg.PodCPU), corev1.ResourceMemory: resource.MustParse(cfg.PodMemory)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: holdsNamespace, Name: holdsApp},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(cfg.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					v1alpha1.ReserveOnDeleteAnnotation: "true",
					"bench.multicache.dev/revision":    "1",
				}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl},
				}}},
			},
		},
	}
}
