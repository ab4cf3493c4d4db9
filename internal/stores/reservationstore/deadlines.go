package reservationstore

import "container/heap"

// deadlineHeap orders Reserved reservations by expiry, earliest first (container/heap).
// Each entry knows its index, so a reservation that is matched or deleted leaves the heap in
// O(log n); the reaper pops only what is due, O(k log n) for k due of n.
type deadlineHeap []*entry

var _ heap.Interface = (*deadlineHeap)(nil)

// Len implements heap.Interface.
func (h deadlineHeap) Len() int { return len(h) }

// Less implements heap.Interface: earlier expiry first, then key, so the order is total.
func (h deadlineHeap) Less(i, j int) bool {
	if !h[i].expiresAt.Equal(h[j].expiresAt) {
		return h[i].expiresAt.Before(h[j].expiresAt)
	}
	return h[i].key.String() < h[j].key.String()
}

// Swap implements heap.Interface.
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

// Push implements heap.Interface.
func (h *deadlineHeap) Push(x any) {
	e := x.(*entry)
	e.heapIndex = len(*h)
	*h = append(*h, e)
}

// Pop implements heap.Interface.
func (h *deadlineHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.heapIndex = -1
	return e
}
