package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestLeaseName_EverySubClusterGetsItsOwnValidLease(t *testing.T) {
	values := []string{"a", "foo", "Foo", "FOO", "a_b", "a-b", "a.b", "a--b", "a-0b", "A0b", "x_U", "x_u", "xU", "x-u",
		"Z9", "z9", "a_-b", "a-_b", "0", "shard-1.eu_West",
		"a..b", "a.B", "us.East", "a._b", "a-.b", "a.-b", "x.Y", "rack_1.B", "a-1b", "a.1b", "a_1b", "a-2b"}
	for _, id := range []string{DefaultOptions().LeaderElectionID, "custom-lock"} {
		seen := map[string]string{}
		for _, v := range values {
			o := DefaultOptions()
			o.LeaderElectionID, o.SubClusterKey, o.SubCluster = id, "multicache.dev/shard", v
			name := o.LeaseName()
			if prev, dup := seen[name]; dup {
				t.Errorf("sub-clusters %q and %q share the lease %q", prev, v, name)
			}
			seen[name] = v
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("lease %q for sub-cluster %q is not a valid name: %v", name, v, errs)
			}
			if name == id {
				t.Errorf("sub-cluster %q with id %q shares the whole cluster's lease", v, id)
			}
		}
	}
	o := DefaultOptions()
	o.LeaderElectionID = "custom-lock"
	if got := o.LeaseName(); got != "custom-lock" {
		t.Errorf("without a sub-cluster the lease is %q, want the id", got)
	}
	o.SubClusterKey, o.SubCluster = "k", "foo"
	if got := o.LeaseName(); got != "custom-lock-foo" {
		t.Errorf("a lowercase sub-cluster gives %q, want custom-lock-foo (unchanged from earlier releases)", got)
	}
}
