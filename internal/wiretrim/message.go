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
// slices, searched faster than maps).
type tree struct {
	drop []protowire.Number
	into []subtree
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
				break
			}
			next := n.sub(num)
			if next == nil {
				next = &tree{}
				n.into = append(n.into, subtree{num, next})
			}
			n = next
		}
	}
	return t
}

// sub is the tree of field num, nil when it is not trimmed.
func (t *tree) sub(num protowire.Number) *tree {
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
	for len(msg) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(msg)
		if tagLen < 0 {
			return dst, false
		}
		valLen := protowire.ConsumeFieldValue(num, typ, msg[tagLen:])
		if valLen < 0 {
			return dst, false
		}
		field := msg[:tagLen+valLen]
		msg = msg[tagLen+valLen:]
		if slices.Contains(t.drop, num) {
			continue
		}
		if sub := t.sub(num); sub != nil && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(field[tagLen:])
			var ok bool
			if dst, ok = appendNested(dst, num, len(v), func(dst []byte) ([]byte, bool) { return sub.appendTrimmed(dst, v) }); !ok {
				return dst, false
			}
			continue
		}
		dst = append(dst, field...)
	}
	return dst, true
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
