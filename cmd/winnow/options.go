package main

import (
	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// decision maps the configuration onto the near-duplicate decision (the
// group mode's), which compare, eval, the cluster service and dedup's
// grouping use.
func decision(c config.Config) (similarity.Decision, error) {
	group, _, err := offline.Decisions(c) // both, so a bad remove setting fails too
	return group, err
}
