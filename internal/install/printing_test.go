package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// table GETs path as kubectl does (server-side printing) and returns the rows by object
// name, each cell under its column's name.
func table(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
	}
	var tbl metav1.Table
	if err := json.Unmarshal(body, &tbl); err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]any{}
	for _, row := range tbl.Rows {
		cells := map[string]any{}
		for i, col := range tbl.ColumnDefinitions {
			cells[col.Name] = row.Cells[i]
		}
		rows[fmt.Sprint(cells["Name"])] = cells
	}
	return rows
}

// create creates obj, deleting it when the test ends.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
}

// patchStatus merge-patches the status subresource of obj with raw JSON.
func patchStatus(t *testing.T, obj client.Object, raw string) {
	t.Helper()
	if err := env.Client.Status().Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(raw))); err != nil {
		t.Fatalf("status patch %s: %v", raw, err)
	}
}

// TestPrinting_ColumnsRenderForEveryKind reads every kind the way `kubectl get` does (the
// API server renders the columns) and checks the cells: counters show 0 rather than
// nothing, the expiry of a Reserved reservation shows its time rather than <invalid>.
func TestPrinting_ColumnsRenderForEveryKind(t *testing.T) {
	ctx := context.Background()
	ns := "printing"
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	now := time.Now().UTC().Truncate(time.Second)

	// A group multicache has not written yet, one it wrote with no member scheduled, and
	// one whose counters went back to 0 the way a merge patch from another writer removes
	// them (null).
	fresh := pg(ns, "fresh")
	create(t, fresh)
	pending := pg(ns, "pending")
	create(t, pending)
	patchStatus(t, pending, `{"status":{"phase":"Pending"}}`)
	drained := pg(ns, "drained")
	create(t, drained)
	patchStatus(t, drained, `{"status":{"phase":"Running","running":3,"scheduled":1}}`)
	patchStatus(t, drained, `{"status":{"running":null,"scheduled":null,"pending":2}}`)

	// What the status writer (internal/controllers/status.go) sends: a merge patch of the typed
	// difference. Counters are no longer omitempty, so a counter back at 0 is sent as 0.
	written := pg(ns, "written")
	create(t, written)
	written.Status = v1alpha1.PodGroupStatus{Phase: v1alpha1.PodGroupRunning, Running: 3}
	if err := env.Client.Status().Update(ctx, written); err != nil {
		t.Fatal(err)
	}
	next := written.DeepCopy()
	next.Status.Running, next.Status.Scheduled = 0, 2
	patch := client.MergeFrom(written)
	data, err := patch.Data(next)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"status":{"running":0,"scheduled":2}}`; string(data) != want {
		t.Errorf("the status writer's merge patch is %s, want %s", data, want)
	}
	if err := env.Client.Status().Patch(ctx, next, patch); err != nil {
		t.Fatal(err)
	}

	rows := table(t, "/apis/"+group+"/v1alpha1/namespaces/"+ns+"/podgroups")
	for name, want := range map[string][3]string{
		"fresh": {"", "0", "0"}, "pending": {"Pending", "0", "0"}, "drained": {"Running", "0", "0"}, "written": {"Running", "2", "0"},
	} {
		row := rows[name]
		if row == nil {
			t.Errorf("podgroup %s is not in the table", name)
			continue
		}
		got := [3]string{cell(row["Phase"]), cell(row["Scheduled"]), cell(row["Running"])}
		if got != want {
			t.Errorf("podgroup %s prints Phase/Scheduled/Running %q, want %q", name, got, want)
		}
	}

	rsv := &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"},
		Spec: v1alpha1.ReservationSpec{
			NodeName: "node-a", Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			PodSelector: &metav1.LabelSelector{},
		},
	}
	create(t, rsv)
	expires := now.Add(10 * time.Minute)
	patchStatus(t, rsv, fmt.Sprintf(`{"status":{"phase":"Reserved","reservedAt":%q,"expiresAt":%q}}`,
		now.Add(-time.Minute).Format(time.RFC3339), expires.Format(time.RFC3339)))
	row := table(t, "/apis/"+group+"/v1alpha1/namespaces/"+ns+"/reservations")["held"]
	if row == nil {
		t.Fatal("reservation held is not in the table")
	}
	if got := cell(row["Expires"]); got != expires.Format(time.RFC3339) {
		t.Errorf("Expires prints %q, want the time %s", got, expires.Format(time.RFC3339))
	}
	if cell(row["Phase"]) != "Reserved" || cell(row["Node"]) != "node-a" {
		t.Errorf("reservation row = %v", row)
	}

	// The cluster-scoped kinds, from the samples.
	for _, file := range []string{"cache_v1alpha1_nmnode.yaml", "cache_v1alpha1_customnoderesource.yaml", "cache_v1alpha1_movement.yaml"} {
		for _, u := range readYAML(t, "config/samples/"+file) {
			u.SetName("printing-" + u.GetName())
			status, hasStatus := u.Object["status"]
			create(t, u)
			if hasStatus {
				withStatus := u.DeepCopy()
				withStatus.Object["status"] = status
				if err := env.Client.Status().Update(ctx, withStatus); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// Movement's condition columns, as its status writer sets them.
	patchStatus(t, &v1alpha1.Movement{ObjectMeta: metav1.ObjectMeta{Name: "printing-sample-movement"}}, `{"status":{"conditions":[`+
		`{"type":"Followed","status":"True","reason":"PodsLanded","message":"1 pod","lastTransitionTime":"2026-01-01T00:00:00Z"},`+
		`{"type":"Complete","status":"False","reason":"WaitingForPods","message":"1 of 2","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	for resource, want := range map[string]map[string]string{
		"nmnodes":             {"CPU": "14", "Memory": "60Gi"},
		"customnoderesources": {"BE-CPU": "6", "BE-Memory": "24Gi"},
		"movements":           {"Creator": "sample-descheduler", "Followed": "True", "Complete": "False"},
	} {
		row := table(t, "/apis/"+group+"/v1alpha1/"+resource)["printing-sample-"+map[bool]string{true: "movement", false: "node"}[resource == "movements"]]
		if row == nil {
			t.Errorf("%s: the sample is not in the table", resource)
			continue
		}
		for col, w := range want {
			if got := cell(row[col]); got != w {
				t.Errorf("%s: %s prints %q, want %q", resource, col, got, w)
			}
		}
	}
	for _, resource := range []string{"nmnodes", "customnoderesources", "movements", "namespaces/" + ns + "/podgroups", "namespaces/" + ns + "/reservations"} {
		for name, row := range table(t, "/apis/"+group+"/v1alpha1/"+resource) {
			for col, v := range row {
				if strings.Contains(cell(v), "<invalid>") {
					t.Errorf("%s %s: column %s prints %q", resource, name, col, cell(v))
				}
			}
		}
	}
}

func pg(ns, name string) *v1alpha1.PodGroup {
	return &v1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.PodGroupSpec{MinMember: 2}}
}

// cell renders a table cell as kubectl prints it (nil prints as nothing).
func cell(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
