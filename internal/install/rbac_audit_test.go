package install

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// auditPolicy logs the metadata of every request of the operator's service account, and
// nothing else.
var auditPolicy = []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + operatorUser + `"]
- level: None
`)

// grantedUnused are the rules the operator is granted without the test seeing them used,
// each with the reason it is needed. Keep it empty where the test can exercise the path.
var grantedUnused = map[string]string{
	"get podgroups.scheduling.k8s.io":     podGroupSourceReason,
	"list podgroups.scheduling.k8s.io":    podGroupSourceReason,
	"watch podgroups.scheduling.k8s.io":   podGroupSourceReason,
	"get podgroups.scheduling.x-k8s.io":   podGroupSourceReason,
	"list podgroups.scheduling.x-k8s.io":  podGroupSourceReason,
	"watch podgroups.scheduling.x-k8s.io": podGroupSourceReason,
	"patch events.events.k8s.io": "client-go's event recorder patches an Event when the same event (same object, " +
		"same resourceVersion, reason and action) is recorded again, turning it into a series; the status writers " +
		"record one event per status write, each on a new resourceVersion, so no series forms in practice, but " +
		"the recorder's behaviour is the library's: without patch such an update fails with 403 and is logged",
}

// podGroupSourceReason: the gangs of other APIs are read only when their pod-group source
// is enabled, and this test's API server serves neither (Kubernetes' PodGroup needs a
// feature gate, scheduler-plugins' a CRD). TODO: exercise them with such a server, and
// check whether get is used at all.
const podGroupSourceReason = "read by the pod-group sources of Kubernetes' and scheduler-plugins' PodGroups, off here"

// request is one kind of API request: what an RBAC rule grants. namespace is set only for
// the grants of a Role (in its namespace).
type request struct {
	group, resource, subresource, verb string
}

func (r request) String() string {
	res := r.resource
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	group := r.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s %s.%s", r.verb, res, group)
}

// TestRBAC_TheOperatorUsesExactlyWhatItIsGranted runs the operator as the service account
// install.yaml creates, against the real API server with an audit log, drives every path
// that calls the API (exerciseEveryPath), and compares the requests the audit log shows
// with the rules install.yaml binds to the service account: every request was allowed, and
// every granted (verb, resource) was used or is in grantedUnused with its reason.
func TestRBAC_TheOperatorUsesExactlyWhatItIsGranted(t *testing.T) {
	if env.AuditLog == "" {
		t.Fatal("the test API server has no audit log (TestMain's testsupport.Options.AuditPolicy)")
	}
	objs := installed(t)
	// Apply install.yaml's RBAC again: the Helm test applies the chart's cluster-scoped
	// bindings, of the same names, to its own release namespace.
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount":
			if err := env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
				client.FieldOwner("install-test"), client.ForceOwnership); err != nil {
				t.Fatalf("applying %s %s again: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	op, metricsURL, stop := asServiceAccount(t)
	exerciseEveryPath(t, op, metricsURL)
	stop() // releases the lease: the last write of leader election

	used, denied := auditedRequests(t, env.AuditLog, operatorUser)
	if len(used) == 0 {
		t.Fatalf("the audit log %s shows no request of %s", env.AuditLog, operatorUser)
	}
	for _, d := range denied {
		t.Errorf("the API server denied the operator: %s", d)
	}
	granted := grantsOf(t, objs, operatorNamespace, operatorSA)
	for r := range used {
		if !granted[r] {
			t.Errorf("the operator made %s, which install.yaml does not grant", r)
		}
	}
	var unused []string
	for r := range granted {
		if !used[r] {
			if _, ok := grantedUnused[r.String()]; !ok {
				unused = append(unused, r.String())
			}
		}
	}
	sort.Strings(unused)
	for _, r := range unused {
		t.Errorf("install.yaml grants %s, which the operator never used: drop it from the kubebuilder markers "+
			"(internal/controllers/doc.go) or config/rbac, or list it in grantedUnused with the reason", r)
	}
	for r := range grantedUnused {
		if !slices.ContainsFunc(keys(granted), func(g request) bool { return g.String() == r }) {
			t.Errorf("grantedUnused lists %s, which install.yaml does not grant", r)
		}
	}
	if t.Failed() {
		var all []string
		for r := range used {
			all = append(all, r.String())
		}
		sort.Strings(all)
		t.Logf("requests the operator made:\n%s", strings.Join(all, "\n"))
	}
}

func keys[K comparable, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// auditEvent is what the test reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
}

// auditedRequests reads the audit log: the resource requests user made, and those the API
// server refused with 403.
func auditedRequests(t *testing.T, path, user string) (map[request]bool, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	used := map[request]bool{}
	var denied []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if ev.User.Username != user || ev.ObjectRef == nil || ev.Stage != "ResponseComplete" {
			continue // non-resource requests (discovery) are every user's
		}
		r := request{group: ev.ObjectRef.APIGroup, resource: ev.ObjectRef.Resource, subresource: ev.ObjectRef.Subresource, verb: ev.Verb}
		used[r] = true
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code == 403 {
			denied = append(denied, fmt.Sprintf("%s %s (%s)", r, ev.RequestURI, ev.ResponseStatus.Message))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return used, denied
}

// grantsOf expands the rules of every ClusterRole and Role that objs bind to the service
// account namespace/name. Wildcards are refused: the point is to grant what is named.
func grantsOf(t *testing.T, objs []*unstructured.Unstructured, namespace, name string) map[request]bool {
	t.Helper()
	roles := map[string][]rbacv1.PolicyRule{} // "Kind/namespace/name" -> rules
	var refs []string
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterRole", "Role":
			var role rbacv1.ClusterRole // a Role has the same rules
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &role); err != nil {
				t.Fatal(err)
			}
			roles[u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = role.Rules
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same subjects and ref
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && s.Namespace == namespace && s.Name == name
			}) {
				continue
			}
			ns := u.GetNamespace()
			if b.RoleRef.Kind == "ClusterRole" {
				ns = ""
			}
			refs = append(refs, b.RoleRef.Kind+"/"+ns+"/"+b.RoleRef.Name)
		}
	}
	granted := map[request]bool{}
	for _, ref := range refs {
		rules, ok := roles[ref]
		if !ok {
			t.Errorf("install.yaml binds %s to the operator but does not define it", ref)
		}
		for _, rule := range rules {
			if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
				t.Errorf("%s: rule %+v: the operator's roles name resources, not URLs or objects", ref, rule)
				continue
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, v := range rule.Verbs {
						if g == "*" || res == "*" || v == "*" {
							t.Errorf("%s: rule %+v has a wildcard", ref, rule)
						}
						resource, sub, _ := strings.Cut(res, "/")
						granted[request{group: g, resource: resource, subresource: sub, verb: v}] = true
					}
				}
			}
		}
	}
	if len(refs) == 0 {
		t.Fatalf("install.yaml binds nothing to the service account %s/%s", namespace, name)
	}
	return granted
}
