package drift

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// MetadataStream is the API as /debug/cache/compare lists it when it reads keys and versions
// only (no KeepFunc): each listing's metadata-only lists, in pages, asked for in protobuf
// and read as they arrive, field by field, without decoding an object. Of each object it
// keeps its namespace and name (one string when consecutive objects share a namespace, as
// the API server's key order has them) and looks at its resource version where it lies in
// a buffer reused from object to object (the comparison keeps the names it is given). A page of 2,000 pods decoded whole
// (PartialObjectMetadataList) allocates its body twice over, every object's labels, owners
// and timestamps, and the items' slice; in a process whose heap is the cache, every byte
// of it brings the next collection nearer and RSS higher. Every other read (Each, Get)
// goes to API.
type MetadataStream struct {
	// API reads what the stream does not: Each (objects, for a KeepFunc or a listing keyed
	// otherwise than by names) and Get. Its PageSize is the stream's too.
	API    APISource
	rest   rest.Interface
	mapper meta.RESTMapper
	scheme *runtime.Scheme
}

// NewMetadataStream returns the stream of cfg's API server through httpClient (one without
// a wire trim of its own: the stream reads only what it needs), mapping the listings' types
// to resources with mapper and scheme.
func NewMetadataStream(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, mapper meta.RESTMapper, api APISource) (*MetadataStream, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath, c.GroupVersion = "", nil
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the client of the metadata lists: %w", err)
	}
	return &MetadataStream{API: api, rest: rc, mapper: mapper, scheme: scheme}, nil
}

// metadataAccept asks for a list of the objects' metadata, in protobuf when the API server
// has it, else in JSON.
const metadataAccept = runtime.ContentTypeProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
	runtime.ContentTypeJSON + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// Each implements Source: whole objects, from API.
func (s *MetadataStream) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	return s.API.Each(ctx, l, fn)
}

// Get implements Source, from API.
func (s *MetadataStream) Get(ctx context.Context, l Listing, key client.ObjectKey) (client.Object, bool, error) {
	return s.API.Get(ctx, l, key)
}

// eachVersion implements versionSource.
func (s *MetadataStream) eachVersion(ctx context.Context, l Listing, fn func(key types.NamespacedName, version []byte) error) error {
	gvk, err := apiutil.GVKForObject(l.Object, s.scheme)
	if err != nil {
		return err
	}
	m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	path := "/apis/" + m.Resource.Group + "/" + m.Resource.Version + "/" + m.Resource.Resource
	if m.Resource.Group == "" {
		path = "/api/" + m.Resource.Version + "/" + m.Resource.Resource
	}
	limit := s.API.PageSize
	if limit <= 0 {
		limit = defaultPageSize
	}
	// The next page is asked for as soon as this one's continue token is read (the
	// protobuf list's metadata comes before its items): the API server gathers it while
	// this one's items are read and compared, instead of after. One page ahead at most.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetch := func(token string) <-chan fetchedPage {
		done := make(chan fetchedPage, 1)
		go func() {
			req := s.rest.Get().AbsPath(path).SetHeader("Accept", metadataAccept).Param("limit", strconv.FormatInt(limit, 10))
			if token != "" {
				req = req.Param("continue", token)
			}
			body, err := req.Stream(ctx)
			done <- fetchedPage{body, err}
		}()
		return done
	}
	var ahead <-chan fetchedPage
	aheadToken := ""
	drop := func() { // a page asked for and not read: closed once it arrives
		if ahead != nil {
			go func(p <-chan fetchedPage) {
				if page := <-p; page.body != nil {
					_ = page.body.Close()
				}
			}(ahead)
			ahead = nil
		}
	}
	defer drop()
	r := pageReader{fn: fn, onContinue: func(token string) {
		if token != "" && ahead == nil {
			ahead, aheadToken = fetch(token), token
		}
	}}
	current := fetch("")
	for {
		page := <-current
		if page.err != nil {
			return page.err
		}
		next, err := r.read(page.body)
		_ = page.body.Close()
		if err != nil {
			return fmt.Errorf("reading a page of %s: %w", path, err)
		}
		if next == "" {
			return nil
		}
		if aheadToken != next { // a page whose token came twice
			drop()
		}
		if ahead == nil { // a JSON page: its token is known once it is read
			ahead = fetch(next)
		}
		current, ahead, aheadToken = ahead, nil, ""
	}
}

// fetchedPage is the answer to a request for a page: its body, or why there is none.
type fetchedPage struct {
	body io.ReadCloser
	err  error
}

// pageReader reads metadata-only list pages, reusing its buffers from page to page.
type pageReader struct {
	fn func(key types.NamespacedName, version []byte) error
	// onContinue, when set, is called with a protobuf page's continue token as soon as it
	// is read, before the page's items.
	onContinue func(token string)
	br         *bufio.Reader
	buf        []byte
	// namespace is the last object's, handed out again while the next ones share it.
	namespace string
}

// protobufMagic starts every protobuf body of the API server ("Protobuf encoding" in the
// Kubernetes API concepts), before a runtime.Unknown whose raw is the list's message.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// Field numbers (k8s.io/apimachinery/pkg/runtime/generated.proto,
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto).
const (
	unknownTypeMeta        protowire.Number = 1 // Unknown.typeMeta
	typeMetaAPIVersion     protowire.Number = 1 // TypeMeta.apiVersion
	typeMetaKind           protowire.Number = 2 // TypeMeta.kind
	unknownRaw             protowire.Number = 2 // Unknown.raw
	listMetadata           protowire.Number = 1 // PartialObjectMetadataList.metadata
	listItems              protowire.Number = 2 // PartialObjectMetadataList.items
	listMetaContinue       protowire.Number = 3 // ListMeta.continue
	partialMetadata        protowire.Number = 1 // PartialObjectMetadata.metadata
	objectMetaName         protowire.Number = 1 // ObjectMeta.name
	objectMetaNamespace    protowire.Number = 3 // ObjectMeta.namespace
	objectMetaResourceVers protowire.Number = 6 // ObjectMeta.resourceVersion
)

// read reads one page from body, calls fn for each of its objects and returns the page's
// continue token.
func (r *pageReader) read(body io.Reader) (string, error) {
	if r.br == nil {
		r.br = bufio.NewReaderSize(body, 64<<10)
	} else {
		r.br.Reset(body)
	}
	head, err := r.br.Peek(len(protobufMagic))
	if err != nil || !bytes.Equal(head, protobufMagic) {
		return r.readJSON()
	}
	_, _ = r.br.Discard(len(protobufMagic))
	typed, found := false, false
	var next string
	err = r.fields(-1, func(num protowire.Number, n int) error {
		switch {
		case num == unknownTypeMeta:
			b, err := r.next(n)
			if err != nil {
				return err
			}
			typed = true
			return checkListKind(b)
		case num != unknownRaw:
			return r.skip(n)
		case !typed:
			// The items are handed out as they are read: the kind must come first, as
			// the API server writes it.
			return errors.New("the protobuf envelope names no kind before its list")
		}
		found = true
		return r.fields(n, func(num protowire.Number, n int) error {
			switch num {
			case listMetadata:
				b, err := r.next(n)
				if err != nil {
					return err
				}
				v, err := field(b, listMetaContinue)
				next = string(v)
				if err == nil && r.onContinue != nil {
					r.onContinue(next)
				}
				return err
			case listItems:
				b, err := r.next(n)
				if err != nil {
					return err
				}
				return r.item(b)
			}
			return r.skip(n)
		})
	})
	if err == nil && !found {
		err = errors.New("the protobuf envelope holds no list")
	}
	return next, err
}

// checkListKind returns an error unless the protobuf envelope's TypeMeta b names a
// meta.k8s.io/v1 PartialObjectMetadataList: the items of another kind (a Status, a Table)
// would read as an empty or a garbled list, every cached object reported as not in the
// cluster.
func checkListKind(b []byte) error {
	apiVersion, err := field(b, typeMetaAPIVersion)
	if err != nil {
		return err
	}
	kind, err := field(b, typeMetaKind)
	if err != nil {
		return err
	}
	if string(kind) != "PartialObjectMetadataList" || string(apiVersion) != metav1.SchemeGroupVersion.String() {
		return fmt.Errorf("the API answered %s %s, not a %s PartialObjectMetadataList", apiVersion, kind, metav1.SchemeGroupVersion)
	}
	return nil
}

// item calls fn with the key and version of one PartialObjectMetadata message.
func (r *pageReader) item(b []byte) error {
	m, err := field(b, partialMetadata)
	if err != nil {
		return err
	}
	var name, namespace, version []byte
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m = m[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, m); n < 0 {
				return protowire.ParseError(n)
			}
			m = m[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(m)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m = m[n:]
		switch num {
		case objectMetaName:
			name = v
		case objectMetaNamespace:
			namespace = v
		case objectMetaResourceVers:
			version = v
		}
	}
	if string(namespace) != r.namespace {
		r.namespace = string(namespace)
	}
	return r.fn(types.NamespacedName{Namespace: r.namespace, Name: string(name)}, version)
}

// readJSON reads a page the API server answered in JSON (a server that does not answer metadata lists in protobuf):
// decoded whole, as client-go would.
func (r *pageReader) readJSON() (string, error) {
	list := &metav1.PartialObjectMetadataList{}
	if err := json.NewDecoder(r.br).Decode(list); err != nil {
		return "", fmt.Errorf("neither protobuf nor a JSON list of metadata: %w", err)
	}
	if list.Kind != "PartialObjectMetadataList" || list.APIVersion != metav1.SchemeGroupVersion.String() {
		// Anything else (a Status, a Table, {}) would read as an empty list: every cached
		// object reported as not in the cluster.
		return "", fmt.Errorf("the API answered %s %s, not a %s PartialObjectMetadataList", list.APIVersion, list.Kind, metav1.SchemeGroupVersion)
	}
	for i := range list.Items {
		m := &list.Items[i].ObjectMeta
		if err := r.fn(types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, []byte(m.ResourceVersion)); err != nil {
			return "", err
		}
	}
	return list.Continue, nil
}

// fields reads the fields of a message of length n (-1: to the end of the body), calling
// fn with each length-delimited field's number and length, fn reading exactly that many
// bytes; other fields are skipped.
func (r *pageReader) fields(n int, fn func(num protowire.Number, n int) error) error {
	for n != 0 {
		tag, err := binary.ReadUvarint(r.br)
		if n < 0 && errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return unexpected(err)
		}
		used := protowire.SizeVarint(tag)
		num, typ := protowire.DecodeTag(tag)
		var size int
		switch typ {
		case protowire.BytesType:
			l, err := binary.ReadUvarint(r.br)
			if err != nil {
				return unexpected(err)
			}
			if l > uint64(maxBody) || (n >= 0 && used+protowire.SizeVarint(l)+int(l) > n) {
				return fmt.Errorf("field %d of %d bytes overruns its message", num, l)
			}
			used += protowire.SizeVarint(l) + int(l)
			err = fn(num, int(l))
			if err != nil {
				return err
			}
		case protowire.VarintType:
			v, err := binary.ReadUvarint(r.br)
			if err != nil {
				return unexpected(err)
			}
			used += protowire.SizeVarint(v)
		case protowire.Fixed32Type:
			size = 4
		case protowire.Fixed64Type:
			size = 8
		default:
			return fmt.Errorf("field %d has wire type %d, not one of a list of metadata", num, typ)
		}
		if size > 0 {
			if err := r.skip(size); err != nil {
				return err
			}
			used += size
		}
		if n >= 0 {
			if used > n {
				return fmt.Errorf("field %d overruns its message", num)
			}
			n -= used
		}
	}
	return nil
}

// maxMessage bounds a message read whole (an object's metadata, a list's metadata): the
// API server's own limit on an object is 3 MiB (etcd's on a value 1.5 MiB).
const maxMessage = 16 << 20

// maxBody bounds the length of any field, the list inside its envelope included.
const maxBody = 1 << 40

// next reads the next n bytes into the reused buffer.
func (r *pageReader) next(n int) ([]byte, error) {
	if n > maxMessage {
		return nil, fmt.Errorf("a message of %d bytes in a list of metadata, more than %d", n, maxMessage)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.br, b); err != nil {
		return nil, unexpected(err)
	}
	return b, nil
}

// skip discards the next n bytes.
func (r *pageReader) skip(n int) error {
	if _, err := r.br.Discard(n); err != nil {
		return unexpected(err)
	}
	return nil
}

// unexpected is an error of a body that ends too early.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// field returns the last length-delimited field num of message b, nil when it has none.
func field(b []byte, num protowire.Number) ([]byte, error) {
	var found []byte
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			found, b = v, b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, b); l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
	}
	return found, nil
}
