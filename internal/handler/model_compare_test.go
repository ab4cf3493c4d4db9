package handler

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// compare returns every difference between the handler and the model.
func (m *model) compare(h *Handler) []error {
	var errs []error
	for key, p := range m.pods {
		st, ok := h.PodState(key)
		if !ok || st.State != p.state || st.Pod != p.pod || st.BindingFinished != p.finished {
			errs = append(errs, fmt.Errorf("pod %s: handler %+v (present %v), model %s %p finished=%v", key, st, ok, p.state, p.pod, p.finished))
		}
	}
	if n := h.pods.Len(); n != len(m.pods) {
		errs = append(errs, fmt.Errorf("handler holds %d pods, model %d", n, len(m.pods)))
	}
	// Node charges, recomputed from scratch.
	type charge struct{ requested, bestEffort, reserved int64 }
	want := map[string]*charge{}
	at := func(n string) *charge {
		if want[n] == nil {
			want[n] = &charge{}
		}
		return want[n]
	}
	for n := range m.nodes {
		at(n)
	}
	for n := range m.nm {
		at(n)
	}
	for n := range m.cnr {
		at(n)
	}
	for _, p := range m.pods {
		if p.pod.Spec.NodeName == "" || store.IsTerminal(p.pod) {
			continue
		}
		c := at(p.pod.Spec.NodeName)
		if store.IsBestEffort(p.pod) {
			c.bestEffort += store.PodRequests(p.pod).MilliCPU
		} else {
			c.requested += store.PodRequests(p.pod).MilliCPU
		}
	}
	for key, e := range m.rsvs {
		if e.phase == v1alpha1.ReservationReserved {
			c := at(e.node)
			cpu := e.r.Spec.Resources.Cpu().MilliValue()
			c.requested += cpu
			c.reserved += cpu
		}
		v, ok := h.Reservation(key)
		if !ok || v.Phase != e.phase || (e.linked && (v.Owner == nil || ownerKeyOf(v.Owner) != e.owner)) {
			errs = append(errs, fmt.Errorf("reservation %s: handler %s owner %v, model %s owner %v", key, v.Phase, v.Owner, e.phase, e.owner))
		}
		if e.phase == v1alpha1.ReservationReserved && !v.ExpiresAt.Equal(e.expiresAt) {
			errs = append(errs, fmt.Errorf("reservation %s: expires %v, model %v", key, v.ExpiresAt, e.expiresAt))
		}
	}
	infos := h.NodeInfos()
	if len(infos) != len(want) {
		errs = append(errs, fmt.Errorf("handler has %d node infos, model %d", len(infos), len(want)))
	}
	for _, info := range infos {
		c := want[info.Name]
		if c == nil {
			errs = append(errs, fmt.Errorf("node %s: in the handler only", info.Name))
			continue
		}
		if info.Requested.MilliCPU != c.requested || info.BestEffortRequested.MilliCPU != c.bestEffort || info.Reserved.MilliCPU != c.reserved {
			errs = append(errs, fmt.Errorf("node %s: requested/best-effort/reserved %d/%d/%d, model %d/%d/%d", info.Name,
				info.Requested.MilliCPU, info.BestEffortRequested.MilliCPU, info.Reserved.MilliCPU, c.requested, c.bestEffort, c.reserved))
		}
	}
	// Pod group counts, recounted.
	for key := range m.groups {
		var total int32
		for _, p := range m.pods {
			if p.pod.Namespace == key.Namespace && p.pod.Labels[v1alpha1.PodGroupLabel] == key.Name {
				total++
			}
		}
		g, ok := h.PodGroup(key)
		if !ok || g.Counts.Total() != total {
			errs = append(errs, fmt.Errorf("group %s: handler counts %+v, model %d members", key, g.Counts, total))
		}
	}
	return errs
}

func ownerKeyOf(ref *v1alpha1.PodReference) types.NamespacedName {
	return types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
}
