package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// MovementStatusReconciler writes Movement status from the cache (leader only): per owner
// and node the pods that consumed the movement, this component among the schedulers that
// have seen it, and the conditions Followed and Complete, with an Event when either turns
// True. While no pod followed it, it looks for pods that carry multicache.dev/movement-name
// as a label instead of an annotation (ignored) and says so in the condition and an Event.
type MovementStatusReconciler struct {
	Client        client.Client
	Reader        movementReader
	ComponentName string
	// Clock dates the conditions.
	Clock clock.PassiveClock
	// Recorder raises the Events; nil raises none.
	Recorder events.EventRecorder
}

// maxNamedPods bounds the pods a condition message names.
const maxNamedPods = 5

// Reconcile implements reconcile.Reconciler.
func (r *MovementStatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &v1alpha1.Movement{}
	view, ok, err := readForStatus(ctx, r.Client, req.NamespacedName, m, func() (store.Movement, client.Object, bool) {
		v, found := r.Reader.Movement(req.Name)
		return v, v.Movement, found
	})
	if !ok {
		return ctrl.Result{}, err
	}
	var labelled []string
	if !followed(view) {
		var err error
		if labelled, err = r.labelledPods(ctx, m.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	conds := movementConditions(view, labelled)
	wrote, err := writeStatus(ctx, r.Client, m,
		func(cur *v1alpha1.Movement) (*v1alpha1.Movement, error) {
			next := cur.DeepCopy()
			next.Status = movementStatus(cur.Status, view, r.ComponentName)
			next.Status.Conditions = setConditions(cur.Status.Conditions, cur.Generation, r.Clock.Now(), conds...)
			return next, nil
		})
	if err != nil || !wrote {
		return ctrl.Result{}, err
	}
	for _, c := range conds {
		old := meta.FindStatusCondition(m.Status.Conditions, c.Type)
		switch {
		case c.Status == metav1.ConditionTrue && (old == nil || old.Status != metav1.ConditionTrue):
			r.event(m, corev1.EventTypeNormal, c.Type, c.Message)
		case c.Reason == reasonLabelNotAnnotation && (old == nil || old.Reason != reasonLabelNotAnnotation):
			ctrl.LoggerFrom(ctx).Info("pods label the movement they follow instead of annotating it; they are ignored",
				"movement", m.Name, "pods", labelled, "annotation", v1alpha1.MovementNameAnnotation)
			r.event(m, corev1.EventTypeWarning, reasonLabelNotAnnotation, c.Message)
		}
	}
	return ctrl.Result{}, nil
}

// event raises an Event on the movement, when there is a recorder.
func (r *MovementStatusReconciler) event(m *v1alpha1.Movement, eventType, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(m, nil, eventType, reason, "Status", "%s", note)
	}
}

// reasonLabelNotAnnotation is the reason of Followed=False when pods carry the movement's
// name as a label, which multicache does not read.
const reasonLabelNotAnnotation = "LabelNotAnnotation"

// labelledPods returns namespace/name of the pods labelled with the movement's name (a
// read of the manager's pod cache, done only while no pod followed the movement).
func (r *MovementStatusReconciler) labelledPods(ctx context.Context, name string) ([]string, error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.MatchingLabels{v1alpha1.MovementNameAnnotation: name}); err != nil {
		return nil, fmt.Errorf("listing pods labelled %s=%s: %w", v1alpha1.MovementNameAnnotation, name, err)
	}
	out := make([]string, 0, len(pods.Items))
	for _, p := range pods.Items {
		if p.Annotations[v1alpha1.MovementNameAnnotation] != name {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// followed reports whether any pod consumed the movement.
func followed(view store.Movement) bool {
	for _, o := range view.Owners {
		for _, n := range o.Nodes {
			if len(n.Actual) > 0 {
				return true
			}
		}
	}
	return false
}

// movementConditions says whether pods followed the movement and whether every suggested
// node got its pods; labelled are pods that carry its name as a label (ignored).
func movementConditions(view store.Movement, labelled []string) []metav1.Condition {
	var landed, onSuggested, desired int64
	for _, o := range view.Owners {
		for _, n := range o.Nodes {
			landed += int64(len(n.Actual))
			desired += n.Desired
			onSuggested += min(int64(len(n.Actual)), n.Desired)
		}
	}
	progress := fmt.Sprintf("%d of %d suggested pods landed on their suggested nodes", onSuggested, desired)
	var f metav1.Condition
	switch {
	case landed > 0:
		f = condition(v1alpha1.MovementConditionFollowed, true, "PodsLanded", fmt.Sprintf("%d pods consumed it; %s", landed, progress))
	case len(labelled) > 0:
		named := labelled[:min(len(labelled), maxNamedPods)]
		more := ""
		if len(labelled) > len(named) {
			more = fmt.Sprintf(" and %d more", len(labelled)-len(named))
		}
		f = condition(v1alpha1.MovementConditionFollowed, false, reasonLabelNotAnnotation, fmt.Sprintf(
			"pods %s%s carry %s as a label, which is ignored: set it as an annotation on the pods that follow the movement",
			strings.Join(named, ", "), more, v1alpha1.MovementNameAnnotation))
	default:
		f = condition(v1alpha1.MovementConditionFollowed, false, "NoPodYet",
			"no pod consumed it yet: a pod follows it with the annotation "+v1alpha1.MovementNameAnnotation+": "+view.Name)
	}
	complete := desired > 0 && onSuggested >= desired
	reason := "WaitingForPods"
	if complete {
		reason = "AllPlaced"
	}
	return []metav1.Condition{f, condition(v1alpha1.MovementConditionComplete, complete, reason, progress)}
}

// movementStatus lists, owner by owner, the nodes where pods that consumed the movement
// landed, and adds component to the notified schedulers; it keeps the conditions (the
// writer sets its own on top).
func movementStatus(cur v1alpha1.MovementStatus, view store.Movement, component string) v1alpha1.MovementStatus {
	next := v1alpha1.MovementStatus{NotifiedSchedulers: slices.Clone(cur.NotifiedSchedulers), Conditions: cur.Conditions}
	if !slices.Contains(next.NotifiedSchedulers, component) {
		next.NotifiedSchedulers = append(next.NotifiedSchedulers, component)
		slices.Sort(next.NotifiedSchedulers)
	}
	for _, o := range view.Owners {
		ownerStatus := v1alpha1.MovementOwnerStatus{Owner: o.Owner}
		for _, n := range o.Nodes {
			if len(n.Actual) > 0 {
				ownerStatus.Nodes = append(ownerStatus.Nodes, v1alpha1.MovementNode{Node: n.Node, ActualPods: n.Actual})
			}
		}
		next.Owners = append(next.Owners, ownerStatus)
	}
	return next
}
