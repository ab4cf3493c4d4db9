// Package wiretrim drops, from the protobuf lists and watch streams of the API server, the
// fields of objects that the informers' transforms would drop after decoding them, so that
// they are never decoded: an http.RoundTripper that rewrites the response body at the wire
// level (google.golang.org/protobuf/encoding/protowire), before client-go decodes it.
//
// Only GETs of the collection of a configured resource (/api/v1/pods,
// /apis/apps/v1/namespaces/ns/replicasets...) answered 200 with an uncompressed
// application/vnd.kubernetes.protobuf body (a list) or its stream=watch variant (a watch,
// or a streamed list) are rewritten, and in those only the objects whose envelope names the
// configured kind or its list; anything else, and any object or frame that does not parse,
// passes through unchanged.
package wiretrim

import (
	"mime"
	"net/http"
	"strings"
)

// Kind says what to drop from the objects of one resource.
type Kind struct {
	// Group, Version and Resource name the collection in the request's URL.
	Group, Version, Resource string
	// Kind is the objects' kind in their envelope (its list is Kind+"List").
	Kind string
	// APIVersion is the envelope's apiVersion when it is not Group/Version: a list of
	// the resource's metadata only (Kind PartialObjectMetadata) says meta.k8s.io/v1.
	APIVersion string
	// Drop are the fields to drop from every object.
	Drop []Path
}

// protobuf is the media type of the API server's protobuf encoding.
const protobuf = "application/vnd.kubernetes.protobuf"

// Wrapper returns a wrapper of transports (for rest.Config.Wrap) that trims the objects
// of kinds in the responses of rt.
func Wrapper(kinds ...Kind) func(rt http.RoundTripper) http.RoundTripper {
	rules := make(map[string]*rule, len(kinds))
	for _, k := range kinds {
		rules[collectionPath(k.Group, k.Version, k.Resource)] = newRule(k)
	}
	return func(rt http.RoundTripper) http.RoundTripper {
		return &transport{next: rt, rules: rules}
	}
}

type transport struct {
	next  http.RoundTripper
	rules map[string]*rule
}

// WrappedRoundTripper returns the transport below, so that client-go's and
// k8s.io/apimachinery's helpers that unwrap transports (closing idle connections, say)
// reach it.
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, err
	}
	r := t.rules[collection(req.URL.Path)]
	if r == nil {
		return resp, nil
	}
	// rest.Config.Wrap puts this wrapper right above the http.Transport (client-go's
	// transport.HTTPWrappersForConfig applies WrapTransport first), which removes
	// Content-Encoding when it negotiated gzip and decompressed the body itself; one still
	// set is an encoding the body still has.
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return resp, nil
	}
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != protobuf {
		return resp, nil
	}
	switch params["stream"] {
	case "":
		resp.Body = &listBody{src: resp.Body, rule: r, size: resp.ContentLength}
	case "watch":
		resp.Body = &watchBody{src: resp.Body, rule: r}
	default:
		return resp, nil
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// collectionPath is the URL path of a resource's collection across namespaces.
func collectionPath(group, version, resource string) string {
	if group == "" {
		return "/api/" + version + "/" + resource
	}
	return "/apis/" + group + "/" + version + "/" + resource
}

// collection returns the path of the collection across namespaces that path lists or
// watches (its namespace removed), "" when path names an object, a subresource or no
// resource.
func collection(path string) string {
	var prefix, rest string
	if r, ok := strings.CutPrefix(path, "/api/"); ok {
		v, after, ok := strings.Cut(r, "/")
		if !ok {
			return ""
		}
		prefix, rest = "/api/"+v+"/", after
	} else if r, ok := strings.CutPrefix(path, "/apis/"); ok {
		g, after, ok := strings.Cut(r, "/")
		if !ok {
			return ""
		}
		v, after, ok := strings.Cut(after, "/")
		if !ok {
			return ""
		}
		prefix, rest = "/apis/"+g+"/"+v+"/", after
	} else {
		return ""
	}
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	switch {
	case len(segs) == 1 && segs[0] != "":
		return prefix + segs[0]
	case len(segs) == 3 && segs[0] == "namespaces" && segs[1] != "" && segs[2] != "":
		return prefix + segs[2]
	}
	return ""
}
