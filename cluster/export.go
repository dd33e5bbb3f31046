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

// exportTries bounds the reads of one group's winner that another
// ingest moved out of the group in between.
const exportTries = 16

// ExportWinners writes a [WinnerLine] per group of st whose winner has a
// signature, in group order, as JSON Lines. It reads st while other
// goroutines may ingest: it lists the groups first, then reads each
// group's winner and the winner's record when it writes the group's line,
// so a line holds the group's winner at that moment, with that page's
// signature; a group founded meanwhile is left out, one deleted meanwhile
// too, and a group whose winner moves out of it exportTries times in a
// row.
func ExportWinners(st Store, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	// The group IDs only, as their numbers where groupID made them (8
	// bytes a group, in the listing's order), others by their place in
	// other after the top bit.
	var (
		ids   []uint64
		other []string
	)
	err := st.Groups(func(id string, g GroupRecord) error {
		if g.Winner == "" {
			return nil
		}
		if n, ok := parseGroupID(id); ok {
			ids = append(ids, n)
		} else {
			ids = append(ids, 1<<63|uint64(len(other)))
			other = append(other, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range ids {
		id := groupID(n)
		if n&(1<<63) != 0 {
			id = other[n&^(1<<63)]
		}
		l, ok, err := winnerLine(st, id)
		if err != nil {
			return err
		}
		if ok {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// winnerLine reads the winner of group id and its record. A winner that
// an ingest moved out of the group between the two reads (to another
// group, or deleted) is read again.
func winnerLine(st Store, id string) (WinnerLine, bool, error) {
	for range exportTries {
		w, _, ok, err := st.GroupSize(id)
		if err != nil || !ok || w == "" {
			return WinnerLine{}, false, err
		}
		p, ok, err := st.Page(w)
		if err != nil {
			return WinnerLine{}, false, err
		}
		if ok && p.Group == id {
			return WinnerLine{Group: id, URL: w, Signature: p.Sig}, p.Sig != nil, nil
		}
	}
	return WinnerLine{}, false, nil
}
