package install

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// access is one request a subject may or may not make.
type access struct {
	verb, resource, subresource, namespace string
	allowed                                bool
}

// TestRoles_TheAuthorizerGrantsWhatTheyClaim binds the installed roles to users and asks
// the real API server's RBAC authorizer (SubjectAccessReview) what each user may do.
func TestRoles_TheAuthorizerGrantsWhatTheyClaim(t *testing.T) {
	installed(t)
	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b"} {
		create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, tc := range []struct {
		role      string
		namespace string   // "" binds cluster-wide
		checks    []access // the first is allowed
	}{
		{"multicache-node-agent-role", "", []access{
			{"create", "nmnodes", "", "", true},
			{"delete", "customnoderesources", "", "", true},
			{"patch", "nmnodes", "status", "", true},
			{"update", "customnoderesources", "status", "", true},
			{"watch", "nmnodes", "", "", true},
			{"create", "podgroups", "", "default", false},
			{"create", "movements", "", "", false},
			{"update", "reservations", "status", "default", false},
		}},
		{"multicache-descheduler-role", "", []access{
			{"create", "movements", "", "", true},
			{"delete", "movements", "", "", true},
			{"get", "movements", "status", "", true},
			{"update", "movements", "status", "", false},
			{"create", "nmnodes", "", "", false},
		}},
		{"multicache-podgroup-editor-role", "team-a", []access{
			{"create", "podgroups", "", "team-a", true},
			{"delete", "podgroups", "", "team-a", true},
			{"create", "podgroups", "", "team-b", false},
			{"update", "podgroups", "status", "team-a", false},
			{"create", "reservations", "", "team-a", false},
		}},
		{"multicache-reservation-viewer-role", "team-a", []access{
			{"list", "reservations", "", "team-a", true},
			{"get", "reservations", "status", "team-a", true},
			{"create", "reservations", "", "team-a", false},
			{"list", "reservations", "", "team-b", false},
		}},
		{"multicache-movement-viewer-role", "", []access{
			{"watch", "movements", "", "", true},
			{"patch", "movements", "", "", false},
		}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			user := "user-of-" + tc.role
			bind(t, ctx, tc.role, tc.namespace, user)
			review := func(c access) *authorizationv1.SubjectAccessReview {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: user,
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Group: group, Resource: c.resource, Subresource: c.subresource, Verb: c.verb, Namespace: c.namespace,
					},
				}}
				if err := env.Client.Create(ctx, sar); err != nil {
					t.Fatal(err)
				}
				return sar
			}
			// The authorizer reads bindings through its own informer: wait until it has seen
			// this one (its first allowed check passes) before judging any check.
			first := tc.checks[0]
			deadline := time.Now().Add(30 * time.Second)
			for !review(first).Status.Allowed && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			for _, c := range tc.checks {
				if sar := review(c); sar.Status.Allowed != c.allowed {
					t.Errorf("%s %s/%s in %q: allowed = %v, want %v (%s)", c.verb, c.resource, c.subresource,
						c.namespace, sar.Status.Allowed, c.allowed, sar.Status.Reason)
				}
			}
		})
	}
}

// bind binds role to user: in namespace with a RoleBinding, cluster-wide when it is "".
func bind(t *testing.T, ctx context.Context, role, namespace, user string) {
	t.Helper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	meta := metav1.ObjectMeta{Name: "test-" + role, Namespace: namespace}
	var obj client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}
	if namespace != "" {
		obj = &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}
	}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
}

// TestRoles_AggregateIntoTheBuiltInRoles checks the viewer and editor labels against the
// aggregation selectors of the API server's own view, edit and admin roles (the
// controller-manager, which this test control plane does not run, does the aggregating).
func TestRoles_AggregateIntoTheBuiltInRoles(t *testing.T) {
	objs := installed(t)
	ctx := context.Background()
	aggregatedInto := func(role *rbacv1.ClusterRole) map[string]bool {
		out := map[string]bool{}
		for _, builtin := range []string{"view", "edit", "admin"} {
			b := &rbacv1.ClusterRole{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: builtin}, b); err != nil {
				t.Fatal(err)
			}
			if b.AggregationRule == nil {
				t.Fatalf("the built-in %s role has no aggregation rule", builtin)
			}
			for _, sel := range b.AggregationRule.ClusterRoleSelectors {
				s, err := metav1.LabelSelectorAsSelector(&sel)
				if err != nil {
					t.Fatal(err)
				}
				if s.Matches(labels.Set(role.Labels)) {
					out[builtin] = true
				}
			}
		}
		return out
	}
	for _, k := range kinds {
		for _, tc := range []struct {
			suffix string
			want   string // the built-in role it aggregates into directly, "" for none
		}{{"viewer", "view"}, {"editor", map[bool]string{true: "edit", false: ""}[k.namespaced]}} {
			name := fmt.Sprintf("multicache-%s-%s-role", k.file, tc.suffix)
			role := &rbacv1.ClusterRole{}
			found := false
			for _, u := range objs {
				if u.GetKind() == "ClusterRole" && u.GetName() == name {
					role.Labels, found = u.GetLabels(), true
				}
			}
			if !found {
				t.Errorf("install.yaml has no ClusterRole %s", name)
				continue
			}
			got := aggregatedInto(role)
			if tc.want == "" && len(got) > 0 {
				t.Errorf("%s aggregates into %v; a cluster-scoped kind's editor must be bound explicitly", name, got)
			}
			if tc.want != "" && (!got[tc.want] || len(got) != 1) {
				t.Errorf("%s aggregates into %v, want only %s (and through it the roles above)", name, got, tc.want)
			}
		}
	}
}
