package stores

import (
	"cmp"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// CompareKeys orders keys as their rendered forms (types.NamespacedName.String:
// "namespace/name", or the name alone without a namespace) compare byte by byte, without
// building them: the order of the API server's keys in etcd (/registry/<resource>/<key>),
// in which it lists, and of the dump's maps.
func CompareKeys(a, b types.NamespacedName) int {
	if a.Namespace == b.Namespace {
		return strings.Compare(a.Name, b.Name)
	}
	n := min(len(a.Namespace), len(b.Namespace))
	if c := strings.Compare(a.Namespace[:n], b.Namespace[:n]); c != 0 {
		return c
	}
	// One namespace is a prefix of the other: the shorter one goes on with its "/".
	if len(a.Namespace) < len(b.Namespace) {
		return cmp.Compare('/', b.Namespace[n])
	}
	return cmp.Compare(a.Namespace[n], '/')
}
