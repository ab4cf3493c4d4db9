package operator

import (
	"fmt"
	"strings"
)

// LeaseName is the name of the leader-election Lease: --leader-election-id, and in a
// sub-cluster "<id>-<encoded sub-cluster>", so that each shard elects its own leader
// whatever the id.
func (o *Options) LeaseName() string {
	if o.SubClusterKey == "" {
		return o.LeaderElectionID
	}
	return o.LeaderElectionID + "-" + EncodeSubCluster(o.SubCluster)
}

// EncodeSubCluster turns a sub-cluster (a label value: letters, digits, '-', '_', '.') into
// a suffix of a Lease name (lowercase letters, digits and '-': a '.' could make an empty or
// a '-'-ended DNS label), one-to-one, so that no two sub-clusters share a lease. Lowercase
// letters and digits stay; '-' escapes the rest: "--" for '-', "-0" for '_', "-1" for '.',
// '-' and the lowercase letter for an uppercase one. So "foo" stays "foo", "Foo" is "-foo",
// "a_b" is "a-0b", "a-b" is "a--b" and "a.B" is "a-1-b".
func EncodeSubCluster(v string) string {
	var b strings.Builder
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == '.':
			b.WriteString("-1")
		case c >= 'A' && c <= 'Z':
			b.WriteByte('-')
			b.WriteRune(c - 'A' + 'a')
		case c == '-':
			b.WriteString("--")
		case c == '_':
			b.WriteString("-0")
		default:
			// Not in a label value (Validate rejects it); escaped at a fixed width all the same.
			fmt.Fprintf(&b, "-2%06x", c)
		}
	}
	return b.String()
}
