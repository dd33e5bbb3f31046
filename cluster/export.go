package cluster

import (
	"bufio"
	"encoding/json"
	"io"
)

// WinnerLine is one line of [ExportWinners]: a group, its winner and the
// winner's signature (its similarity.Signature encoding without the word
// sequence; base64 in JSON). The Beam tier-2 job (winnow-beam assign)
// reads these lines.
type WinnerLine struct {
	Group     string `json:"group"`
	URL       string `json:"url"`
	Signature []byte `json:"signature"`
}

// ExportWinners writes a [WinnerLine] per group of st whose winner has a
// signature, in group order, as JSON Lines. It reads st while other
// goroutines may ingest: a group changed meanwhile may be written as it
// was before or after.
func ExportWinners(st Store, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	type gw struct{ id, winner string }
	var groups []gw
	err := st.Groups(func(id string, g GroupRecord) error {
		if g.Winner != "" {
			groups = append(groups, gw{id, g.Winner})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range groups {
		p, ok, err := st.Page(g.winner)
		if err != nil {
			return err
		}
		if ok && p.Sig != nil {
			if err := enc.Encode(WinnerLine{Group: g.id, URL: g.winner, Signature: p.Sig}); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
