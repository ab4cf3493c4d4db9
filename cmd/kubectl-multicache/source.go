package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/seed0f91f25e/multicache/internal/reconnect"
)

// endpoint is a replica's debug server, reached over HTTP at base.
type endpoint struct {
	base   string
	client *http.Client
	// close ends the port-forward, if there is one.
	close func()
	// notes, when set, is told why the plugin waits (stderr).
	notes io.Writer
}

// get fetches path (e.g. /debug/cache) and returns the body of a 200 answer. Another
// answer becomes an error carrying the server's message; a 404 is errNotFound. A 429 (the
// server writes one dump, and runs one comparison, at a time) is asked again after its Retry-After, within
// busyRetries and busyWait.
func (e *endpoint) get(ctx context.Context, path string) ([]byte, error) {
	var waited time.Duration
	work := "writing a dump to"
	if strings.HasSuffix(path, "/compare") {
		work = "comparing its cache with the API for"
	}
	for try := 1; ; try++ {
		body, retryAfter, err := e.getOnce(ctx, path)
		if retryAfter < 0 {
			return body, err
		}
		if try > busyRetries || waited >= busyWait {
			return nil, fmt.Errorf("%w (asked %d times over %s: try again later)", err, try, waited)
		}
		wait := min(retryAfter, busyWait-waited)
		if e.notes != nil {
			_, _ = fmt.Fprintf(e.notes, "multicache is %s another client (one at a time); waiting %s for it to finish (retry %d of %d)\n",
				work, wait, try, busyRetries)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("waiting for another client's request to finish: %w; the last answer: %v", serr, err)
		}
		waited += wait
	}
}

// busyRetries and busyWait bound how often and how long get asks again after a 429.
const (
	busyRetries = 5
	busyWait    = 2 * time.Minute
)

// maxRetryAfter bounds one wait; a Retry-After that is not a number of seconds waits
// defaultRetryAfter.
const (
	maxRetryAfter     = 30 * time.Second
	defaultRetryAfter = time.Second
)

// sleep waits d or until ctx is done (its error); a variable for the tests.
var sleep = reconnect.Sleep

// getOnce fetches path once; retryAfter is how long to wait before asking again after a
// 429, -1 for any other answer.
func (e *endpoint) getOnce(ctx context.Context, path string) (body []byte, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+path, nil)
	if err != nil {
		return nil, -1, err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, -1, fmt.Errorf("reaching multicache's debug server at %s: %w", e.base, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return nil, -1, fmt.Errorf("reading %s%s: %w", e.base, path, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return body, -1, nil
	case http.StatusNotFound:
		return nil, -1, fmt.Errorf("%w: %s", errNotFound, strings.TrimSpace(string(body)))
	}
	err = fmt.Errorf("%s%s answered %s: %s", e.base, path, resp.Status, strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusTooManyRequests {
		return nil, -1, err
	}
	retryAfter = defaultRetryAfter
	if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && secs >= 0 {
		retryAfter = min(time.Duration(secs)*time.Second, maxRetryAfter)
	}
	return nil, retryAfter, err
}

// errNotFound is a 404 of the debug server (an unknown node, or not a debug server).
var errNotFound = errors.New("not found")

// directEndpoint reaches a debug server by URL (--debug-url: a local run, `make run`).
func directEndpoint(raw string, timeout time.Duration) (*endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--debug-url=%q: want http://host:port, e.g. http://127.0.0.1:8082 (the operator's --debug-bind-address)", raw)
	}
	return &endpoint{base: strings.TrimSuffix(u.String(), "/"), client: &http.Client{Timeout: timeout}, close: func() {}}, nil
}

// target says which replica to port-forward to.
type target struct {
	kubeconfig, context string
	namespace, selector string
	pod                 string
	port                int
}

// restConfig loads the kubeconfig the way kubectl does ($KUBECONFIG, ~/.kube/config,
// --kubeconfig, --context).
func (t target) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = t.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w (or reach a local run with --debug-url)", err)
	}
	return cfg, nil
}

// choosePod returns the replica to reach: --pod, else a running and ready pod matching
// the selector, by name (any replica will do: every replica keeps a full cache).
func choosePod(ctx context.Context, cs kubernetes.Interface, t target) (string, error) {
	if t.pod != "" {
		return t.pod, nil
	}
	pods, err := cs.CoreV1().Pods(t.namespace).List(ctx, metav1.ListOptions{LabelSelector: t.selector})
	if err != nil {
		return "", fmt.Errorf("listing multicache's pods in namespace %s (selector %s): %w", t.namespace, t.selector, err)
	}
	var ready, others []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			others = append(others, p.Name+" ("+string(p.Status.Phase)+")")
			continue
		}
		if isReady(&p) {
			ready = append(ready, p.Name)
		} else {
			others = append(others, p.Name+" (not ready: the cache is catching up)")
		}
	}
	if len(ready) == 0 {
		if len(others) == 0 {
			return "", fmt.Errorf("no multicache pod in namespace %s matches %s: is multicache installed there? (--namespace, --selector, --pod); "+
				"for a local run (make run) pass --debug-url=http://127.0.0.1:8082", t.namespace, t.selector)
		}
		return "", fmt.Errorf("no multicache pod in namespace %s is running and ready: %s (wait, or name one with --pod)",
			t.namespace, strings.Join(others, ", "))
	}
	sort.Strings(ready)
	return ready[0], nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// forwardedEndpoint port-forwards a free local port to the debug port of a multicache pod
// through the API server (as `kubectl port-forward` does: WebSockets, falling back to
// SPDY), so the debug server can stay on the pod's loopback. The caller needs list on pods
// and create on pods/portforward in the namespace.
func forwardedEndpoint(ctx context.Context, t target, timeout time.Duration) (*endpoint, error) {
	cfg, err := t.restConfig()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	pod, err := choosePod(ctx, cs, t)
	if err != nil {
		return nil, err
	}
	reqURL := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(t.namespace).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, reqURL)
	tunneling, err := portforward.NewSPDYOverWebsocketDialer(reqURL, cfg)
	if err != nil {
		return nil, err
	}
	dialer = portforward.NewFallbackDialer(tunneling, dialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	stop, ready := make(chan struct{}), make(chan struct{})
	var errOut strings.Builder
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", t.port)}, stop, ready, io.Discard, &errOut)
	if err != nil {
		return nil, err
	}
	failed := make(chan error, 1)
	go func() { failed <- pf.ForwardPorts() }()
	closeOnce := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}
	select {
	case <-ready:
	case err := <-failed:
		return nil, fmt.Errorf("port-forwarding to pod %s/%s port %d: %v %s", t.namespace, pod, t.port, err, errOut.String())
	case <-time.After(timeout):
		closeOnce()
		return nil, fmt.Errorf("port-forwarding to pod %s/%s port %d: not ready after %s", t.namespace, pod, t.port, timeout)
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		closeOnce()
		return nil, fmt.Errorf("port-forwarding to pod %s/%s: no local port (%v)", t.namespace, pod, err)
	}
	return &endpoint{
		base:   fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local),
		client: &http.Client{Timeout: timeout},
		close:  closeOnce,
	}, nil
}
