package multicache

import (
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/publicreader"
)

func init() { publicreader.Of = func(h *handler.Handler) any { return readerOf(h) } }
