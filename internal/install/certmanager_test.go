package install

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCertManagerOverlay_ServesMetricsWithTheCertificatesSecret renders config/certmanager and
// follows the chain a cluster would: the Certificate names the metrics Service's in-cluster
// name and an Issuer the overlay installs; its Secret is mounted where --metrics-cert-path
// points; the patched Deployment is accepted by the real API server (dry run). The test API
// server has no cert-manager CRDs, so the Certificate and Issuer are checked for shape only.
func TestCertManagerOverlay_ServesMetricsWithTheCertificatesSecret(t *testing.T) {
	installed(t) // the namespace and what the Deployment refers to
	out, err := exec.Command(kustomize(t), "build", filepath.Join(env.RepoRoot, "config", "certmanager")).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize build config/certmanager: %v\n%s", err, out)
	}
	objs := decodeYAML(t, out)
	find := func(kind string) *unstructured.Unstructured {
		for _, u := range objs {
			if u.GetKind() == kind {
				return u
			}
		}
		t.Fatalf("config/certmanager renders no %s", kind)
		return nil
	}
	var svc corev1.Service
	typed(t, objs, "Service", &svc)
	var deploy appsv1.Deployment
	typed(t, objs, "Deployment", &deploy)
	cert, issuer := find("Certificate"), find("Issuer")

	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if want := svc.Name + "." + svc.Namespace + ".svc"; !slices.Contains(dnsNames, want) {
		t.Errorf("the Certificate's dnsNames %v lack the metrics Service's %s", dnsNames, want)
	}
	if ref, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name"); ref != issuer.GetName() || issuer.GetNamespace() != cert.GetNamespace() {
		t.Errorf("the Certificate's issuer %q is not the overlay's Issuer %s/%s", ref, issuer.GetNamespace(), issuer.GetName())
	}
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")

	c := deploy.Spec.Template.Spec.Containers[0]
	var certPath string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-cert-path="); ok {
			certPath = v
		}
	}
	var mounted string
	for _, m := range c.VolumeMounts {
		if m.MountPath == certPath {
			mounted = m.Name
		}
	}
	var fromSecret string
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		if v.Name == mounted && v.Secret != nil {
			fromSecret = v.Secret.SecretName
		}
	}
	if certPath == "" || fromSecret != secret {
		t.Errorf("--metrics-cert-path=%q is mounted from Secret %q, want the Certificate's %q", certPath, fromSecret, secret)
	}
	deploy.SetManagedFields(nil)
	if err := env.Client.Patch(context.Background(), &deploy, client.Apply, client.FieldOwner("test"), client.ForceOwnership,
		client.DryRunAll); err != nil {
		t.Errorf("the API server rejects the patched Deployment: %v", err)
	}
}
