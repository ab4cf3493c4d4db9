package wiretrim

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestPick_ARepeatedFieldIsJudgedStrictly: an envelope the API server never sends, with its
// TypeMeta or its encoding repeated, is picked only if every repetition allows it: a
// malformed TypeMeta or a non-empty encoding anywhere leaves it untrimmed, and the kind and
// API version are those of the last TypeMeta alone.
func TestPick_ARepeatedFieldIsJudgedStrictly(t *testing.T) {
	typeMeta := func(apiVersion, kind string) []byte {
		var b []byte
		if apiVersion != "" {
			b = protowire.AppendTag(b, typeMetaAPIVersion, protowire.BytesType)
			b = protowire.AppendString(b, apiVersion)
		}
		if kind != "" {
			b = protowire.AppendTag(b, typeMetaKind, protowire.BytesType)
			b = protowire.AppendString(b, kind)
		}
		return b
	}
	field := func(b []byte, num protowire.Number, v []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v)
	}
	podList := typeMeta("v1", "PodList")
	malformed := []byte{0x0a, 0x05, 'v'} // a length past the end
	r := newRule(podKind)
	for name, tc := range map[string]struct {
		envelope []byte
		picked   bool
	}{
		"one TypeMeta":                      {field(nil, unknownTypeMeta, podList), true},
		"an empty encoding after it":        {field(field(nil, unknownTypeMeta, podList), unknownContentEncoding, nil), true},
		"a malformed TypeMeta, then a good": {field(field(nil, unknownTypeMeta, malformed), unknownTypeMeta, podList), false},
		"gzip, then an empty encoding":      {field(field(field(nil, unknownTypeMeta, podList), unknownContentEncoding, []byte("gzip")), unknownContentEncoding, nil), false},
		"a PodList, then an empty TypeMeta": {field(field(nil, unknownTypeMeta, podList), unknownTypeMeta, nil), false},
		"an empty TypeMeta, then a PodList": {field(field(nil, unknownTypeMeta, nil), unknownTypeMeta, podList), true},
		"a PodList, then another kind":      {field(field(nil, unknownTypeMeta, podList), unknownTypeMeta, typeMeta("v1", "NodeList")), false},
	} {
		if got := r.pick(tc.envelope) != nil; got != tc.picked {
			t.Errorf("%s: picked %v, want %v", name, got, tc.picked)
		}
	}
}
