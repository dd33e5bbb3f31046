package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Beam finds a pipeline's functions and types on the workers by
// registration at init: a worker is this binary started anew, so
// registration cannot wait for a constructor (the one kind of init
// registry that STYLE.md lets in, since Beam's model requires it).
func init() {
	// Every grouping carries batches (batch.go): KV<int, []byte>.
	type batches = func(*[]byte) bool
	type emitBatch = func(int, []byte)
	register.DoFn4x1[context.Context, []byte, emitBatch, emitBatch, error](&signFn{})
	register.DoFn4x1[int, batches, emitBatch, emitBatch, error](&numberFn{})
	register.Function3x1[int, []byte, func(string), error](sampleFn)
	register.DoFn3x0[int, func(*string) bool, emitBatch](&splittersFn{})
	register.DoFn3x1[int, batches, emitBatch, error](&rangeFn{})
	register.Function2x2[int, []byte, int, []byte](oneGroup)
	register.DoFn3x1[int, batches, emitBatch, error](&idFn{})
	register.DoFn6x1[int, batches, emitBatch, emitBatch, emitBatch, emitBatch, error](&sigJoinFn{})
	register.DoFn6x1[int, batches, emitBatch, emitBatch, emitBatch, emitBatch, error](&idSigFn{})
	register.DoFn6x1[context.Context, int, batches, emitBatch, emitBatch, emitBatch, error](&bucketFn{})
	register.DoFn4x1[int, []byte, emitBatch, emitBatch, error](&blockFn{})
	register.DoFn4x1[context.Context, int, batches, emitBatch, error](&joinedFn{})
	register.DoFn3x1[int, batches, emitBatch, error](&halfFn{})
	register.DoFn5x1[context.Context, int, batches, emitBatch, emitBatch, error](&decideFn{})
	register.DoFn4x1[context.Context, int, batches, emitBatch, error](&starFn{})
	register.Function3x1[int, []byte, func(int64), error](edgeBytesFn)
	register.DoFn3x0[int, func(*int64) bool, emitBatch](&totalFn{})
	register.DoFn4x1[int, batches, emitBatch, emitBatch, error](&routeFn{})
	register.DoFn4x1[context.Context, int, batches, emitBatch, error](&unionFn{})
	register.DoFn3x1[int, batches, emitBatch, error](&memberFn{})
	register.DoFn4x1[context.Context, int, batches, func(string), error](&clusterFn{})
	register.DoFn3x1[context.Context, int, func(*string) bool, error](&writeFn{})
	register.DoFn3x1[context.Context, int, batches, error](&loadFn{})

	register.DoFn4x1[context.Context, string, emitBatch, emitBatch, error](&winnersFn{})
	register.DoFn4x1[int, []byte, emitBatch, emitBatch, error](&pageKeysFn{})
	register.DoFn4x1[context.Context, int, batches, emitBatch, error](&probeFn{})
	register.DoFn4x1[int, batches, emitBatch, emitBatch, error](&matchFn{})
	register.DoFn3x1[int, batches, emitBatch, error](&newGroupFn{})
	register.DoFn4x1[context.Context, int, batches, func(string), error](&assignLineFn{})

	register.Emitter1[string]()
	register.Emitter1[int64]()
	register.Emitter2[int, []byte]()
	register.Iter1[string]()
	register.Iter1[int64]()
	register.Iter1[[]byte]()
}
