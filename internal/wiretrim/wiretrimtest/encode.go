// Package wiretrimtest encodes objects as the API server sends them in protobuf (a list,
// a watch stream) and serves them to a client-go client without an API server, for the
// tests and benchmarks of package wiretrim and of its users.
package wiretrimtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// Media types of the API server's protobuf responses.
const (
	ListContentType  = runtime.ContentTypeProtobuf
	WatchContentType = runtime.ContentTypeProtobuf + ";stream=watch"
)

func protobuf() runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		panic("client-go's scheme has no protobuf serializer")
	}
	return info
}

// Object encodes obj (of a kind of client-go's scheme) as the API server does: the magic
// prefix and a runtime.Unknown naming its kind around the object's message.
func Object(obj runtime.Object) ([]byte, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	return runtime.Encode(scheme.Codecs.EncoderForVersion(protobuf().Serializer, gvks[0].GroupVersion()), obj)
}

// Event is one event of a watch stream.
type Event struct {
	Type   watch.EventType
	Object runtime.Object
}

// Watch encodes events as the API server's protobuf watch stream: length-delimited frames
// of metav1.WatchEvent, each with its object encoded as by Object.
func Watch(events ...Event) ([]byte, error) {
	info := protobuf()
	var buf bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&buf), info.StreamSerializer.Serializer)
	for _, e := range events {
		raw, err := Object(e.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding the object of a %s event: %w", e.Type, err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: raw}}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// Responder answers every GET with List, or with Watch when the request watches, as the
// API server would in protobuf.
type Responder struct {
	List, Watch []byte
}

// RoundTrip implements http.RoundTripper.
func (r Responder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, contentType := r.List, ListContentType
	if req.URL.Query().Get("watch") == "true" {
		body, contentType = r.Watch, WatchContentType
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header:        http.Header{"Content-Type": []string{contentType}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
	}, nil
}
