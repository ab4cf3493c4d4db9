package wiretrim

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Path is a field path into an object's protobuf message, by field number: {1, 17} is
// metadata.managedFields of any object, {2, 3, 2} a ReplicaSet's spec.template.spec.
type Path []protowire.Number

// ManagedFields is metadata.managedFields of any object (ObjectMeta field 17 in
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto).
var ManagedFields = Path{1, 17}

// tree is the fields to drop of one message and the sub-messages to trim (a few each:
// slices, searched faster than maps; numbers under 64, most of them, also in bit masks).
type tree struct {
	drop []protowire.Number
	into []subtree
	// dropMask and intoMask have bit n set for field n < 64 in drop and into.
	dropMask, intoMask uint64
}

type subtree struct {
	num  protowire.Number
	tree *tree
}

func newTree(paths []Path) *tree {
	t := &tree{}
	for _, p := range paths {
		n := t
		for i, num := range p {
			if i == len(p)-1 {
				n.drop = append(n.drop, num)
				n.dropMask |= bit(num)
				break
			}
			next := n.sub(num)
			if next == nil {
				next = &tree{}
				n.into = append(n.into, subtree{num, next})
				n.intoMask |= bit(num)
			}
			n = next
		}
	}
	return t
}

// newTreeInto is the tree that trims field num with sub and keeps everything else.
func newTreeInto(num protowire.Number, sub *tree) *tree {
	return &tree{into: []subtree{{num, sub}}, intoMask: bit(num)}
}

// bit is num's bit in a mask, 0 for numbers out of [0, 64).
func bit(num protowire.Number) uint64 {
	if uint32(num) < 64 {
		return 1 << num
	}
	return 0
}

// drops reports whether t drops field num.
func (t *tree) drops(num protowire.Number) bool {
	if uint32(num) < 64 {
		return t.dropMask&(1<<num) != 0
	}
	return slices.Contains(t.drop, num)
}

// sub is the tree of field num, nil when it is not trimmed.
func (t *tree) sub(num protowire.Number) *tree {
	if uint32(num) < 64 && t.intoMask&(1<<num) == 0 {
		return nil
	}
	for _, s := range t.into {
		if s.num == num {
			return s.tree
		}
	}
	return nil
}

// appendTrimmed appends msg without the fields t drops to dst; false when msg is not a
// well-formed message (dst is then to be discarded).
func (t *tree) appendTrimmed(dst, msg []byte) ([]byte, bool) {
	// Kept fields are copied a run at a time: msg[run:at] is the run not yet copied.
	run, at := 0, 0
	for at < len(msg) {
		num, typ, tagLen := protowire.ConsumeTag(msg[at:])
		if tagLen < 0 {
			return dst, false
		}
		valLen := protowire.ConsumeFieldValue(num, typ, msg[at+tagLen:])
		if valLen < 0 {
			return dst, false
		}
		field := msg[at : at+tagLen+valLen]
		if t.drops(num) {
			dst = append(dst, msg[run:at]...)
			at += len(field)
			run = at
			continue
		}
		if sub := t.sub(num); sub != nil && typ == protowire.BytesType {
			dst = append(dst, msg[run:at]...)
			at += len(field)
			run = at
			v, _ := protowire.ConsumeBytes(field[tagLen:])
			var ok bool
			if dst, ok = appendNested(dst, num, len(v), func(dst []byte) ([]byte, bool) { return sub.appendTrimmed(dst, v) }); !ok {
				return dst, false
			}
			continue
		}
		at += len(field)
	}
	return append(dst, msg[run:]...), true
}

// valid reports whether appendTrimmed trims msg: msg parses, and so does every
// sub-message t trims. A list is trimmed in place only when valid: a trim that failed
// halfway would have overwritten the list it was to pass through unchanged.
func (t *tree) valid(msg []byte) bool {
	for len(msg) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(msg)
		if tagLen < 0 {
			return false
		}
		valLen := protowire.ConsumeFieldValue(num, typ, msg[tagLen:])
		if valLen < 0 {
			return false
		}
		if sub := t.sub(num); sub != nil && typ == protowire.BytesType && !t.drops(num) {
			if v, _ := protowire.ConsumeBytes(msg[tagLen:]); !sub.valid(v) {
				return false
			}
		}
		msg = msg[tagLen+valLen:]
	}
	return true
}

// appendNested appends field num as a length-delimited value that fill appends, at most
// maxLen bytes long: the length is reserved at its longest and the value moved back when
// its length takes fewer bytes (rare: a trimmed object usually keeps its length's size).
func appendNested(dst []byte, num protowire.Number, maxLen int, fill func([]byte) ([]byte, bool)) ([]byte, bool) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	at := len(dst)
	reserved := protowire.SizeVarint(uint64(maxLen))
	dst = append(dst, make([]byte, reserved)...)
	dst, ok := fill(dst)
	if !ok {
		return dst, false
	}
	n := len(dst) - at - reserved
	var size [binaryMaxVarintLen]byte
	enc := protowire.AppendVarint(size[:0], uint64(n))
	if len(enc) > reserved {
		return dst, false // fill grew the value: never, it only drops fields
	}
	if len(enc) < reserved {
		copy(dst[at+len(enc):], dst[at+reserved:])
		dst = dst[:len(dst)-(reserved-len(enc))]
	}
	copy(dst[at:], enc)
	return dst, true
}

const binaryMaxVarintLen = 10
