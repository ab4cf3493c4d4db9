package v1alpha1

// Condition types multicache sets in status.conditions (metav1.Condition), so that
// `kubectl wait --for=condition=<type>` works on its objects. Each is True or False with a
// reason and a message that say why; its lastTransitionTime is when that last changed.
const (
	// ReservationConditionReserved is True while the reservation holds its resources on its
	// node (phase Reserved).
	ReservationConditionReserved = "Reserved"
	// ReservationConditionMatched is True once a pod the API bound to the node consumed the
	// reservation (phase Matched).
	ReservationConditionMatched = "Matched"
	// ReservationConditionExpired is True once the TTL ran out with no matching pod (phase
	// Expired).
	ReservationConditionExpired = "Expired"

	// PodGroupConditionScheduled is True while at least minMember members are placed on
	// nodes (or ran to completion).
	PodGroupConditionScheduled = "Scheduled"
	// PodGroupConditionRunning is True while at least minMember members run (or succeeded).
	PodGroupConditionRunning = "Running"
	// PodGroupConditionTimedOut is True once the schedule timeout passed with fewer than
	// minMember members placed (phase Timeout).
	PodGroupConditionTimedOut = "TimedOut"

	// MovementConditionFollowed is True once at least one pod consumed the movement (a pod
	// annotated MovementNameAnnotation landed).
	MovementConditionFollowed = "Followed"
	// MovementConditionComplete is True once every suggested node received the pods the
	// movement wants there.
	MovementConditionComplete = "Complete"
)
