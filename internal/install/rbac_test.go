package install

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kindInfo names one kind of cache.multicache.dev the way the manifests do.
type kindInfo struct {
	kind, file, plural string
	namespaced         bool
	shortNames         []string
}

// kinds are the five kinds, with the short names the CRDs must declare.
var kinds = []kindInfo{
	{"NMNode", "nmnode", "nmnodes", false, []string{"nmn", "mcnmn"}},
	{"CustomNodeResource", "customnoderesource", "customnoderesources", false, []string{"cnr", "mccnr"}},
	{"PodGroup", "podgroup", "podgroups", true, []string{"mcpg"}},
	{"Movement", "movement", "movements", false, []string{"mvt", "mcmvt"}},
	{"Reservation", "reservation", "reservations", true, []string{"rsv", "mcrsv"}},
}

const (
	group         = "cache.multicache.dev"
	aggregateView = "rbac.authorization.k8s.io/aggregate-to-view"
	aggregateEdit = "rbac.authorization.k8s.io/aggregate-to-edit"
)

var (
	readVerbs = []string{"get", "list", "watch"}
	allVerbs  = []string{"create", "delete", "get", "list", "patch", "update", "watch"}
)

// roleSpec is what one role claims: resource -> verbs, and its aggregation labels.
type roleSpec struct {
	grants    map[string][]string
	aggregate map[string]string
}

// claimedRoles are the roles config/rbac ships for people and agents, by file name.
func claimedRoles() map[string]roleSpec {
	roles := map[string]roleSpec{
		"node_agent_role": {grants: map[string][]string{
			"nmnodes": allVerbs, "customnoderesources": allVerbs,
			"nmnodes/status": {"get", "patch", "update"}, "customnoderesources/status": {"get", "patch", "update"},
		}},
		"descheduler_role": {grants: map[string][]string{"movements": allVerbs, "movements/status": {"get"}}},
	}
	for _, k := range kinds {
		roles[k.file+"_viewer_role"] = roleSpec{
			grants:    map[string][]string{k.plural: readVerbs, k.plural + "/status": {"get"}},
			aggregate: map[string]string{aggregateView: "true"},
		}
		editor := roleSpec{grants: map[string][]string{k.plural: allVerbs, k.plural + "/status": {"get"}}}
		if k.namespaced {
			// Cluster-scoped kinds describe the cluster: not for every holder of "edit".
			editor.aggregate = map[string]string{aggregateEdit: "true"}
		}
		roles[k.file+"_editor_role"] = editor
	}
	return roles
}

// readRole decodes config/rbac/<file>.yaml.
func readRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	objs := readYAML(t, filepath.Join("config", "rbac", file+".yaml"))
	if len(objs) != 1 || objs[0].GetKind() != "ClusterRole" {
		t.Fatalf("%s.yaml: want one ClusterRole", file)
	}
	role := &rbacv1.ClusterRole{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, role); err != nil {
		t.Fatalf("%s.yaml: %v", file, err)
	}
	return role
}

// TestRoles_GrantExactlyWhatTheyClaim reads every viewer, editor, node-agent and
// descheduler role and checks it grants exactly the resources and verbs it claims, in
// cache.multicache.dev only, and aggregates where it says.
func TestRoles_GrantExactlyWhatTheyClaim(t *testing.T) {
	for file, want := range claimedRoles() {
		t.Run(file, func(t *testing.T) {
			role := readRole(t, file)
			if wantName := strings.ReplaceAll(strings.TrimSuffix(file, "_role"), "_", "-") + "-role"; role.Name != wantName {
				t.Errorf("name = %q, want %q", role.Name, wantName)
			}
			got := map[string][]string{}
			for _, r := range role.Rules {
				if !slices.Equal(r.APIGroups, []string{group}) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
					t.Errorf("rule %+v: want only apiGroups [%s], no resourceNames or nonResourceURLs", r, group)
				}
				for _, res := range r.Resources {
					got[res] = append(got[res], r.Verbs...)
				}
			}
			for res := range got {
				sort.Strings(got[res])
				got[res] = slices.Compact(got[res])
			}
			for res, verbs := range want.grants {
				if !slices.Equal(got[res], verbs) {
					t.Errorf("%s: verbs %v, want %v", res, got[res], verbs)
				}
			}
			for res := range got {
				if _, ok := want.grants[res]; !ok {
					t.Errorf("grants %s %v, which it does not claim", res, got[res])
				}
			}
			for key, value := range role.Labels {
				if strings.HasPrefix(key, "rbac.authorization.k8s.io/aggregate-to-") && want.aggregate[key] != value {
					t.Errorf("label %s=%s: aggregates where it should not", key, value)
				}
			}
			for key, value := range want.aggregate {
				if role.Labels[key] != value {
					t.Errorf("no label %s=%s: not aggregated", key, value)
				}
			}
		})
	}
}

// TestRoles_CoverEveryKindAndAreAllInstalled checks that every CRD has its viewer and
// editor, and that config/rbac/kustomization.yaml lists every file of config/rbac.
func TestRoles_CoverEveryKindAndAreAllInstalled(t *testing.T) {
	crds, err := filepath.Glob(filepath.Join(env.RepoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var plurals, covered []string
	for _, f := range crds {
		plurals = append(plurals, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), group+"_"), ".yaml"))
	}
	for _, k := range kinds {
		covered = append(covered, k.plural)
	}
	sort.Strings(plurals)
	sort.Strings(covered)
	if !slices.Equal(plurals, covered) {
		t.Errorf("the CRDs are %v but the roles cover %v: add a viewer and an editor role", plurals, covered)
	}

	kustomization, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "rbac", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(env.RepoRoot, "config", "rbac", "*.yaml"))
	for _, f := range files {
		name := filepath.Base(f)
		if name != "kustomization.yaml" && !strings.Contains(string(kustomization), "\n- "+name+"\n") {
			t.Errorf("config/rbac/%s is not in config/rbac/kustomization.yaml", name)
		}
	}
}
