package controllers

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fencedClient refuses every write while fence returns an error: a leader that was paused
// (SIGSTOP, a long GC pause, a frozen VM) past its lease may resume with reconciles in
// flight, and must not write status from its now stale view once another replica may lead.
// Reads pass through.
type fencedClient struct {
	client.Client
	fence func() error
}

// fenced wraps c so that its writes check fence first; nil fence returns c.
func fenced(c client.Client, fence func() error) client.Client {
	if fence == nil {
		return c
	}
	return fencedClient{Client: c, fence: fence}
}

func (c fencedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.fence(); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c fencedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.fence(); err != nil {
		return err
	}
	return c.Client.Delete(ctx, obj, opts...)
}

func (c fencedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.fence(); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c fencedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.fence(); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c fencedClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if err := c.fence(); err != nil {
		return err
	}
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c fencedClient) Status() client.SubResourceWriter {
	return fencedWriter{SubResourceWriter: c.Client.Status(), fence: c.fence}
}

func (c fencedClient) SubResource(name string) client.SubResourceClient {
	return fencedSubResource{SubResourceClient: c.Client.SubResource(name), fence: c.fence}
}

// fencedWriter is a status (or other subresource) writer that checks the fence.
type fencedWriter struct {
	client.SubResourceWriter
	fence func() error
}

func (w fencedWriter) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := w.fence(); err != nil {
		return err
	}
	return w.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (w fencedWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := w.fence(); err != nil {
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w fencedWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := w.fence(); err != nil {
		return err
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// fencedSubResource is a subresource client whose writes check the fence.
type fencedSubResource struct {
	client.SubResourceClient
	fence func() error
}

func (s fencedSubResource) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if err := s.fence(); err != nil {
		return err
	}
	return s.SubResourceClient.Create(ctx, obj, sub, opts...)
}

func (s fencedSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := s.fence(); err != nil {
		return err
	}
	return s.SubResourceClient.Update(ctx, obj, opts...)
}

func (s fencedSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := s.fence(); err != nil {
		return err
	}
	return s.SubResourceClient.Patch(ctx, obj, patch, opts...)
}
