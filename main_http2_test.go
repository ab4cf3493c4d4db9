package main

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// TestBinary_MetricsServerSpeaksHTTP2OnlyWhenEnabled runs the operator with its secure
// metrics server and checks which protocol a client offering h2 and http/1.1 gets: HTTP/1.1
// by default, h2 with --enable-http2.
func TestBinary_MetricsServerSpeaksHTTP2OnlyWhenEnabled(t *testing.T) {
	t.Parallel() // waits on processes; buildOperator is shared
	bin := buildOperator(t)
	path := writeKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "http/1.1"}, {[]string{"--enable-http2"}, "h2"}} {
		probe, metrics := freeAddress(t), freeAddress(t)
		args := append([]string{"--kubeconfig=" + path, "--health-probe-bind-address=" + probe,
			"--metrics-bind-address=" + metrics, "--debug-bind-address=0"}, tc.args...)
		cmd, out := startOperator(t, bin, args...)
		waitReady(t, probe, out)
		var got string
		deadline := time.Now().Add(30 * time.Second)
		for {
			conn, err := tls.Dial("tcp", metrics, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
			if err == nil {
				got = conn.ConnectionState().NegotiatedProtocol
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v: metrics server never answered: %v\n%s", tc.args, err, out)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got != tc.want {
			t.Errorf("%v: negotiated %q, want %q", tc.args, got, tc.want)
		}
		stopGracefully(t, cmd, out)
	}
}

// TestBinary_MetricsServerServesTheGivenCertificate: with --metrics-cert-path the metrics
// server presents that certificate, and a rotated one once the files change (cert-manager
// renews in place).
func TestBinary_MetricsServerServesTheGivenCertificate(t *testing.T) {
	bin := buildOperator(t)
	path := writeKubeconfig(t)
	dir := t.TempDir()
	writeCert := func(host string) []byte {
		crt, key, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "serving.key"), key, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "serving.crt"), crt, 0o600); err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(crt)
		return block.Bytes
	}
	served := func(metrics string) []byte {
		conn, err := tls.Dial("tcp", metrics, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return nil
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	first := writeCert("metrics-one.example")
	probe, metrics := freeAddress(t), freeAddress(t)
	cmd, out := startOperator(t, bin, "--kubeconfig="+path, "--health-probe-bind-address="+probe,
		"--metrics-bind-address="+metrics, "--debug-bind-address=0", "--metrics-cert-path="+dir,
		"--metrics-cert-name=serving.crt", "--metrics-cert-key=serving.key")
	waitReady(t, probe, out)
	for _, want := range [][]byte{first, nil} {
		if want == nil {
			want = writeCert("metrics-two.example") // rotated in place
		}
		deadline := time.Now().Add(30 * time.Second)
		for got := served(metrics); !bytes.Equal(got, want); got = served(metrics) {
			if time.Now().After(deadline) {
				t.Fatalf("the metrics server does not serve the certificate of %s\n%s", dir, out)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	stopGracefully(t, cmd, out)
}
