package e2e

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// PodSizes is what a sample of populated pods weighs as the API server serves one pod
// (GET of the pod): the mean body in JSON and in protobuf, and the share of it that is
// metadata.managedFields in each encoding.
type PodSizes struct {
	Sampled                          int
	JSONBytes, ProtobufBytes         float64
	JSONManagedShare, PBManagedShare float64
	// Managers is the mean number of managedFields entries of a pod.
	Managers float64
}

func (s PodSizes) String() string {
	return fmt.Sprintf("%.0f bytes in JSON, %.0f in protobuf (mean of %d); managedFields %.0f%% of the JSON, %.0f%% of the protobuf, %.1f entries",
		s.JSONBytes, s.ProtobufBytes, s.Sampled, 100*s.JSONManagedShare, 100*s.PBManagedShare, s.Managers)
}

// MeasurePodSizes GETs n pods spread over the population (of pods in all), each in JSON
// and in protobuf.
func MeasurePodSizes(ctx context.Context, cfg *rest.Config, pods, n int) (PodSizes, error) {
	var out PodSizes
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return out, err
	}
	n = min(n, pods)
	var jsonMF, pbMF float64
	for k := range n {
		key := populatedPod(k * pods / n)
		get := func(accept string) ([]byte, error) {
			return cs.CoreV1().RESTClient().Get().Namespace(key.Namespace).Resource("pods").Name(key.Name).SetHeader("Accept", accept).DoRaw(ctx)
		}
		jsonBody, err := get(runtime.ContentTypeJSON)
		if err != nil {
			return out, fmt.Errorf("pod %s in JSON: %w", key, err)
		}
		pbBody, err := get(runtime.ContentTypeProtobuf)
		if err != nil {
			return out, fmt.Errorf("pod %s in protobuf: %w", key, err)
		}
		var pod corev1.Pod
		if err := json.Unmarshal(jsonBody, &pod); err != nil {
			return out, fmt.Errorf("pod %s in JSON: %w", key, err)
		}
		var fromPB corev1.Pod
		if _, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(pbBody, nil, &fromPB); err != nil {
			return out, fmt.Errorf("pod %s in protobuf: %w", key, err)
		}
		jsonMFBytes, err := managedFieldsJSON(&pod)
		if err != nil {
			return out, err
		}
		out.JSONBytes += float64(len(jsonBody))
		out.ProtobufBytes += float64(len(pbBody))
		jsonMF += float64(jsonMFBytes)
		pbMF += float64(managedFieldsProtobuf(&fromPB))
		out.Managers += float64(len(pod.ManagedFields))
	}
	if n == 0 {
		return out, nil
	}
	out.Sampled = n
	out.JSONManagedShare, out.PBManagedShare = jsonMF/out.JSONBytes, pbMF/out.ProtobufBytes
	for _, v := range []*float64{&out.JSONBytes, &out.ProtobufBytes, &out.Managers} {
		*v /= float64(n)
	}
	return out, nil
}

// managedFieldsJSON is how many bytes of pod's JSON its managedFields take.
func managedFieldsJSON(pod *corev1.Pod) (int, error) {
	whole, err := json.Marshal(pod)
	if err != nil {
		return 0, err
	}
	bare := pod.DeepCopy()
	bare.ManagedFields = nil
	rest, err := json.Marshal(bare)
	return len(whole) - len(rest), err
}

// managedFieldsProtobuf is how many bytes of pod's protobuf message its managedFields take.
func managedFieldsProtobuf(pod *corev1.Pod) int {
	bare := pod.DeepCopy()
	bare.ManagedFields = nil
	return pod.Size() - bare.Size()
}

// writePods reports the pods' shape, what one weighs as served, and how long writing them
// took (a realistic pod is two writes: the create and the kubelet's status).
func writePods(p func(string, ...any), res *Result) {
	pods := res.Config.Size.PodShape()
	for _, k := range res.Population.Steps {
		if k.What == "pods" {
			p("Pods: %s; written in %.1fs (%.0f/s). ", pods, k.Duration.Seconds(), float64(k.Objects)/max(k.Duration.Seconds(), 1e-3))
		}
	}
	if s := res.PodSizes; s.Sampled > 0 {
		p("A pod as the API server serves it (GET of %d pods spread over the population): %.0f bytes in JSON, %.0f in protobuf; managedFields (%.1f entries) are %.0f%% of the JSON and %.0f%% of the protobuf.",
			s.Sampled, s.JSONBytes, s.ProtobufBytes, s.Managers, 100*s.JSONManagedShare, 100*s.PBManagedShare)
	}
	p("\n\n")
}
