package reconnect

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Readyz returns a check that asks the API server cfg points at whether it is ready, on
// Kubernetes' documented readiness endpoint (GET /readyz, open to every client through the
// default system:public-info-viewer role): an error when the server cannot be reached or
// answers 5xx (not ready), nil otherwise, a 403 included (a cluster that closed the endpoint
// must not keep the informers waiting). The request is not retried.
func Readyz(cfg *rest.Config) (func(ctx context.Context) error, error) {
	cs, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "readyz"))
	if err != nil {
		return nil, fmt.Errorf("the API server readiness client: %w", err)
	}
	c := cs.Discovery().RESTClient()
	return func(ctx context.Context) error {
		var code int
		err := c.Get().AbsPath("/readyz").MaxRetries(0).Do(ctx).StatusCode(&code).Error()
		if err != nil && (code == 0 || code >= http.StatusInternalServerError) {
			return err
		}
		return nil
	}, nil
}
