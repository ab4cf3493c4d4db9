package reservationstore

import (
	"container/heap"
	"time"
)

// deadline is one heap slot: the expiry sits next to the entry so that comparisons do not
// follow pointers.
type deadline struct {
	at    time.Time
	entry *entry
}

// deadlineHeap orders Reserved reservations by expiry, earliest first (container/heap).
// Each entry knows its index, so a reservation that is matched or deleted leaves the heap in
// O(log n); the reaper pops only what is due, O(k log n) for k due of n.
type deadlineHeap []deadline

var _ heap.Interface = (*deadlineHeap)(nil)

// Len implements heap.Interface.
func (h deadlineHeap) Len() int { return len(h) }

// Less implements heap.Interface: earlier expiry first, then namespace and name, so the
// order is total (deadlines in whole seconds are often equal).
func (h deadlineHeap) Less(i, j int) bool {
	return olderFirst(h[i].at, h[i].entry.key, h[j].at, h[j].entry.key)
}

// Swap implements heap.Interface.
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].entry.heapIndex = i
	h[j].entry.heapIndex = j
}

// Push implements heap.Interface.
func (h *deadlineHeap) Push(x any) {
	e := x.(*entry)
	e.heapIndex = len(*h)
	*h = append(*h, deadline{at: e.expiresAt, entry: e})
}

// Pop implements heap.Interface.
func (h *deadlineHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = deadline{}
	*h = old[:len(old)-1]
	d.entry.heapIndex = -1
	return d.entry
}
