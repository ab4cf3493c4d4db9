package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBinary_MetricsServerSpeaksHTTP2OnlyWhenEnabled runs the operator with its secure
// metrics server and checks which protocol a client offering h2 and http/1.1 gets: HTTP/1.1
// by default, h2 with --enable-http2.
func TestBinary_MetricsServerSpeaksHTTP2OnlyWhenEnabled(t *testing.T) {
	bin := buildOperator(t)
	kubeconfig, err := env.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
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
