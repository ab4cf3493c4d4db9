package testsupport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Etcd edits the control plane's etcd behind the API server's back (for faults no watch
// event tells of) through etcd's documented JSON gateway (/v3/kv/..., on by default), so
// that no module needs the etcd client for a test.
type Etcd struct {
	url string
}

// Etcd returns the editor of this control plane's etcd.
func (e *Env) Etcd() *Etcd {
	return &Etcd{url: e.EtcdURL().String()}
}

// Delete deletes one key and returns how many keys it deleted (0 or 1).
func (e *Etcd) Delete(ctx context.Context, key string) (int64, error) {
	var resp struct {
		Deleted string `json:"deleted"`
	}
	if err := e.call(ctx, "/v3/kv/deleterange", map[string]any{"key": []byte(key)}, &resp); err != nil {
		return 0, err
	}
	return parseInt(resp.Deleted)
}

// Put writes key and returns the store's revision after the write.
func (e *Etcd) Put(ctx context.Context, key, value string) (int64, error) {
	var resp struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := e.call(ctx, "/v3/kv/put", map[string]any{"key": []byte(key), "value": []byte(value)}, &resp); err != nil {
		return 0, err
	}
	return parseInt(resp.Header.Revision)
}

// Compact compacts the store at revision and waits until the compaction is applied.
func (e *Etcd) Compact(ctx context.Context, revision int64) error {
	return e.call(ctx, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(revision, 10), "physical": true}, nil)
}

// call posts req as JSON ([]byte fields become base64, as the gateway expects) and decodes
// the answer into resp; an answer other than 200 is an error with the gateway's message.
func (e *Etcd) call(ctx context.Context, path string, req map[string]any, resp any) error {
	for k, v := range req {
		if b, ok := v.([]byte); ok {
			req[k] = base64.StdEncoding.EncodeToString(b)
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer func() { _ = res.Body.Close() }()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, res.Status, data)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("etcd %s: decoding %q: %w", path, data, err)
	}
	return nil
}

// parseInt reads the gateway's int64 (a JSON string, absent when zero).
func parseInt(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}
