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
	register.DoFn3x1[context.Context, Shard, func(int, Doc), error](&signFn{})
	register.DoFn4x0[int, func(*Doc) bool, func(int, Member), func(int, KeySig)](&numberFn{})
	register.Function3x0[int, Member, func(string)](sampleFn)
	register.DoFn3x0[int, func(*string) bool, func(string)](&splittersFn{})
	register.DoFn4x0[int, Member, func(*string) bool, func(int, Member)](&rangeFn{})
	register.DoFn4x0[int, func(*Member) bool, func(int, Member), func(int, KeySig)](&idFn{})
	register.DoFn5x1[int, func(*KeySig) bool, func(int, []byte), func(string, string), func(int, []byte), error](&exactFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(int, []byte), func(int, Block), error](&bucketFn{})
	register.DoFn3x0[int, Block, func(int, []byte)](&blockFn{})
	register.DoFn3x1[int, func(*[]byte) bool, func(int, []byte), error](&halfFn{})
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(string, string), error](&decideFn{})
	register.DoFn3x0[string, string, func(int, Edge)](&symmetricFn{})
	register.DoFn4x0[context.Context, int, func(*Edge) bool, func(string, string)](&starFn{})
	register.DoFn3x0[string, string, func(int, Member)](&labelFn{})
	register.DoFn3x0[int, func(*Member) bool, func(int, Member)](&memberFn{})
	register.DoFn4x1[context.Context, int, func(*Member) bool, func(Line), error](&clusterFn{})
	register.DoFn3x1[context.Context, int, func(*Line) bool, error](&writeFn{})

	register.DoFn4x1[context.Context, string, func(int, Entry), func(int, []byte), error](&winnersFn{})
	register.DoFn4x1[int, KeySig, func(int, Entry), func(int, []byte), error](&pageKeysFn{})
	register.DoFn4x0[context.Context, int, func(*Entry) bool, func(int, []byte)](&probeFn{})
	register.DoFn4x1[int, func(*[]byte) bool, func(int, Member), func(int, KeySig), error](&matchFn{})
	register.DoFn3x1[int, func(*Member) bool, func(Line), error](&assignLineFn{})

	register.Emitter1[Line]()
	register.Emitter1[string]()
	register.Iter1[string]()
	register.Emitter2[string, string]()
	register.Emitter2[int, Doc]()
	register.Emitter2[int, Member]()
	register.Emitter2[int, KeySig]()
	register.Emitter2[int, Entry]()
	register.Emitter2[int, Join]()
	register.Emitter2[int, []byte]()
	register.Emitter2[int, Block]()
	register.Emitter2[int, Edge]()
	register.Iter1[Doc]()
	register.Iter1[KeySig]()
	register.Iter1[Entry]()
	register.Iter1[Join]()
	register.Iter1[[]byte]()
	register.Iter1[Edge]()
	register.Iter1[Member]()
	register.Iter1[Line]()
}
