package controllers

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestPodSync_AForgetOrExpiryDuringTheApplyDoesNotLoseTheBinding runs the pod
// feed's apply of a sub-cluster on a pod a scheduler assumed and the API then bound, with a
// ForgetPod or an expiry while it reconciles (injected through its Keep filter, which runs
// between reading the informer's object and applying it). The binding must be applied: the pod
// Added on its node, charged once. It used to be rejected as already_added and dropped,
// because the reconciler had read the pod's state before.
func TestPodSync_AForgetOrExpiryDuringTheApplyDoesNotLoseTheBinding(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"forget", "expiry"} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			config, err := stores.NewCacheHandler(stores.Config{Clock: clk, PodAssumedTTL: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			h := handler.New(config, logr.Discard())
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(h.Add(ts.MakeNode("n1", "8", "16Gi")))
			pending := ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.WithResourceVersion("1"))
			must(h.Add(pending))
			assumed := pending.DeepCopy()
			assumed.Spec.NodeName = "n1"
			must(h.AssumePod(assumed))
			must(h.FinishBinding(assumed))
			bound := assumed.DeepCopy()
			bound.ResourceVersion = "2"
			bound.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}

			injected := false
			r := &podSync{
				handler: h,
				log:     logr.Discard(),
				keep: func(context.Context, *corev1.Pod) (bool, error) {
					if !injected {
						injected = true
						if name == "forget" {
							must(h.ForgetPod(assumed))
						} else {
							clk.Step(31 * time.Second)
							if n := h.ExpireAssumedPods(); n != 1 {
								t.Fatalf("expired %d pods, want 1", n)
							}
						}
					}
					return true, nil
				},
			}
			after, err := r.apply(context.Background(), store.PodKey(bound), bound, handler.Current)
			if !injected {
				t.Fatal("the gap was not exercised")
			}
			if err == nil && after == 0 {
				st, ok := h.PodState(store.PodKey(bound))
				if !ok || st.State != store.PodAdded || st.Pod.Spec.NodeName != "n1" {
					t.Fatalf("after the reconcile: state %+v (present %v), want Added on n1 (or a requeue)", st, ok)
				}
			} else {
				t.Fatalf("apply: retry after %v, error %v; want the binding applied at once", after, err)
			}
			info, _ := h.NodeInfo("n1")
			if info.Requested.MilliCPU != 1000 || len(info.Pods) != 1 {
				t.Errorf("n1 requested %dm with %d pods, want the bound pod charged once", info.Requested.MilliCPU, len(info.Pods))
			}
			if errs := h.CheckInvariants(); len(errs) > 0 {
				t.Error(errs)
			}
		})
	}
}
