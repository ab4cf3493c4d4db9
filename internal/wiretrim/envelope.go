package wiretrim

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"
)

// magic prefixes every object the API server encodes as protobuf, before the
// runtime.Unknown envelope (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var magic = []byte("k8s\x00")

// Field numbers of the envelopes (k8s.io/apimachinery/pkg/runtime/generated.proto and
// pkg/apis/meta/v1/generated.proto).
const (
	unknownTypeMeta        protowire.Number = 1 // runtime.Unknown.typeMeta
	unknownRaw             protowire.Number = 2 // runtime.Unknown.raw
	unknownContentEncoding protowire.Number = 3 // runtime.Unknown.contentEncoding
	typeMetaAPIVersion     protowire.Number = 1 // runtime.TypeMeta.apiVersion
	typeMetaKind           protowire.Number = 2 // runtime.TypeMeta.kind
	watchEventObject       protowire.Number = 2 // metav1.WatchEvent.object
	rawExtensionRaw        protowire.Number = 1 // runtime.RawExtension.raw
	listItems              protowire.Number = 2 // items of every List (metadata is 1)
)

// rule trims the objects of one kind.
type rule struct {
	apiVersion, kind, listKind string
	// object and list trim the envelope (runtime.Unknown) of an object and of a list.
	object, list *tree
}

func newRule(k Kind) *rule {
	obj := newTree(k.Drop)
	apiVersion := k.Version
	if k.Group != "" {
		apiVersion = k.Group + "/" + k.Version
	}
	if k.APIVersion != "" {
		apiVersion = k.APIVersion
	}
	return &rule{apiVersion: apiVersion, kind: k.Kind, listKind: k.Kind + "List", object: newTreeInto(unknownRaw, obj),
		list: newTreeInto(unknownRaw, newTreeInto(listItems, obj))}
}

// appendEncoded appends data, an object or list as the API server encodes it (magic and
// runtime.Unknown), trimmed; false when data is not an uncompressed object of the rule's
// kind or its list (dst is then to be discarded).
func (r *rule) appendEncoded(dst, data []byte) ([]byte, bool) {
	u, ok := bytes.CutPrefix(data, magic)
	if !ok {
		return dst, false
	}
	t := r.pick(u)
	if t == nil {
		return dst, false
	}
	return t.appendTrimmed(append(dst, magic...), u)
}

// validEncoded reports whether appendEncoded trims data, which it then may do in place
// (appendEncoded(data[:0], data): each field it writes is no longer than the one it read,
// so its output never overtakes its input).
func (r *rule) validEncoded(data []byte) bool {
	u, ok := bytes.CutPrefix(data, magic)
	if !ok {
		return false
	}
	t := r.pick(u)
	return t != nil && t.valid(u)
}

// pick returns the tree of the envelope u (runtime.Unknown): the object's or the list's
// by the kind and API version it names, nil for another kind, an encoded or malformed one.
// A field repeated is judged strictly: any malformed TypeMeta, any non-empty encoding, and
// the kind and API version of the last TypeMeta alone.
func (r *rule) pick(u []byte) *tree {
	var apiVersion, kind []byte
	typeMetaOK, encoded := true, false
	envelopeOK := eachBytesField(u, func(num protowire.Number, v []byte) {
		switch num {
		case unknownContentEncoding:
			encoded = encoded || len(v) > 0
		case unknownTypeMeta:
			apiVersion, kind = nil, nil
			typeMetaOK = eachBytesField(v, func(num protowire.Number, s []byte) {
				switch num {
				case typeMetaAPIVersion:
					apiVersion = s
				case typeMetaKind:
					kind = s
				}
			}) && typeMetaOK
		}
	})
	if !envelopeOK || !typeMetaOK || encoded || string(apiVersion) != r.apiVersion {
		return nil
	}
	switch string(kind) {
	case r.kind:
		return r.object
	case r.listKind:
		return r.list
	}
	return nil
}

// eachBytesField calls f with the number and value of each length-delimited field of m;
// false when m is not a well-formed message.
func eachBytesField(m []byte, f func(num protowire.Number, v []byte)) bool {
	for len(m) > 0 {
		num, typ, tagLen := protowire.ConsumeTag(m)
		if tagLen < 0 {
			return false
		}
		valLen := protowire.ConsumeFieldValue(num, typ, m[tagLen:])
		if valLen < 0 {
			return false
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(m[tagLen:])
			f(num, v)
		}
		m = m[tagLen+valLen:]
	}
	return true
}

// appendEvent appends frame, a metav1.WatchEvent, with its object trimmed; false when
// frame is not a well-formed event of an object of the rule's kind.
func (r *rule) appendEvent(dst, frame []byte) ([]byte, bool) {
	dst, found, ok := appendInto(dst, frame, watchEventObject, func(dst, ext []byte) ([]byte, bool) {
		// ext is a runtime.RawExtension: its raw is the object as the API server encodes it.
		dst, _, ok := appendInto(dst, ext, rawExtensionRaw, r.appendEncoded)
		return dst, ok
	})
	return dst, found && ok
}

// appendInto appends msg with the value of each length-delimited field num replaced by what
// fill appends from it; found says whether msg has such a field. ok is false when msg is not
// a well-formed message or fill failed (dst is then to be discarded).
func appendInto(dst, msg []byte, num protowire.Number, fill func(dst, v []byte) ([]byte, bool)) (out []byte, found, ok bool) {
	for len(msg) > 0 {
		n, typ, tagLen := protowire.ConsumeTag(msg)
		if tagLen < 0 {
			return dst, found, false
		}
		valLen := protowire.ConsumeFieldValue(n, typ, msg[tagLen:])
		if valLen < 0 {
			return dst, found, false
		}
		field := msg[:tagLen+valLen]
		msg = msg[tagLen+valLen:]
		if n != num || typ != protowire.BytesType {
			dst = append(dst, field...)
			continue
		}
		v, _ := protowire.ConsumeBytes(field[tagLen:])
		if dst, ok = appendNested(dst, num, len(v), func(dst []byte) ([]byte, bool) { return fill(dst, v) }); !ok {
			return dst, found, false
		}
		found = true
	}
	return dst, found, true
}
