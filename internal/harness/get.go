package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// httpClient reads the endpoints of the programs under test. kube-scheduler serves HTTPS
// with a self-signed certificate on localhost: it is not verified.
var httpClient = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 4}, //nolint:gosec // localhost, self-signed
}

// RequestTimeout bounds a Scrape; Get's callers pass their own.
const RequestTimeout = 30 * time.Second

// Get returns the body of url, or an error unless it answered 200 within timeout.
func Get(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	return GetWith(ctx, httpClient, url, timeout)
}

// GetWith is Get through c, e.g. an administrator's client of the API server
// (rest.HTTPClientFor).
func GetWith(ctx context.Context, c *http.Client, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body)
	}
	return body, nil
}
