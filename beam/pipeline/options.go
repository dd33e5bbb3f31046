package pipeline

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/similarity"
)

// settings is what a worker rebuilds from the configuration it is sent:
// the signer, the decisions and the winner ranking of `winnow dedup`
// (package offline builds them for both).
type settings struct {
	cfg      config.Config
	signer   page.Signer
	decision similarity.Decision // the group decision, which clusters
	remove   similarity.Decision // the content-equivalence decision
	rank     offline.Ranking
}

// encodeConfig serializes c for the workers (a DoFn's fields travel as
// JSON; the YAML form is the configuration's own and round-trips).
func encodeConfig(c config.Config) ([]byte, error) { return yaml.Marshal(c) }

// decodeSettings rebuilds the settings from encodeConfig's bytes.
func decodeSettings(b []byte) (*settings, error) {
	var c config.Config
	if err := config.Parse(b, &c); err != nil {
		return nil, fmt.Errorf("pipeline: config: %w", err)
	}
	c = c.WithDefaults()
	group, remove, err := options.Decisions(c)
	if err != nil {
		return nil, err
	}
	rank, err := options.Winners(c)
	if err != nil {
		return nil, err
	}
	return &settings{cfg: c, signer: options.BatchSigner(c), decision: group, remove: remove, rank: rank}, nil
}
