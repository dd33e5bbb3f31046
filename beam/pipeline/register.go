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
	register.Function3x0[string, string, func(string, string)](symmetric)
	register.Function3x0[string, string, func(string, string)](labelFn)
	register.Function3x0[string, func(*Doc) bool, func(string, Doc)](numberFn)
	register.Function1x2[Pair, string, string](pairByA)
	register.Function4x0[string, func(*[]byte) bool, func(*string) bool, func(string, Half)](halfFn)
	register.Function3x0[string, Doc, func(string, []byte)](usableSig)
	register.Function4x0[string, func(*Doc) bool, func(*string) bool, func(string, Member)](memberFn)
	register.Function3x0[int, Block, func(Pair)](blockFn)

	register.DoFn3x1[string, Doc, func(string, Entry), error](&keysFn{})
	register.DoFn5x0[context.Context, string, func(*Entry) bool, func(Pair), func(int, Block)](&bucketFn{})
	register.DoFn5x1[context.Context, string, func(*[]byte) bool, func(*Half) bool, func(string, string), error](&decideFn{})
	register.DoFn4x0[context.Context, string, func(*string) bool, func(string, string)](&starFn{})
	register.DoFn3x1[context.Context, Shard, func(string, Doc), error](&signFn{})
	register.DoFn4x1[context.Context, string, func(*Member) bool, func(Line), error](&clusterFn{})
	register.DoFn3x1[context.Context, int, func(*Line) bool, error](&writeFn{})

	register.Emitter1[Pair]()
	register.Emitter1[Line]()
	register.Emitter2[string, string]()
	register.Emitter2[string, Doc]()
	register.Emitter2[string, Entry]()
	register.Emitter2[int, Block]()
	register.Emitter2[string, Half]()
	register.Emitter2[string, []byte]()
	register.Emitter2[string, Member]()
	register.Iter1[Doc]()
	register.Iter1[Entry]()
	register.Iter1[[]byte]()
	register.Iter1[string]()
	register.Iter1[Half]()
	register.Iter1[Member]()
	register.Iter1[Line]()
}
