package similarity

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestParseDecision covers the request parameters' names; cmd's
// TestDecisionSettings covers config and -set through the same function.
func TestParseDecision(t *testing.T) {
	f := DecisionFields{Method: "winnow_method", Threshold: "winnow_threshold", MinConfidence: "winnow_min_confidence"}
	tests := []struct {
		name    string
		p       Purpose
		s       DecisionSettings
		want    Test
		wantErr string
	}{
		{"nothing set", PurposeRemove, DecisionSettings{}, Test{MethodModel, 0.9}, ""},
		{"default with confidence", PurposeGroup, DecisionSettings{Method: "default", MinConfidence: "0.6"}, Test{MethodModel, 0.6}, ""},
		{"model is default", PurposeGroup, DecisionSettings{Method: "model"}, Test{MethodModel, 0.68}, ""},
		{"simhash paper threshold", PurposeGroup, DecisionSettings{Method: "simhash"}, Test{Method: MethodNone}, ""},
		{"lcs threshold", PurposeRemove, DecisionSettings{Method: "lcs", Threshold: "0.9"}, Test{MethodLCS, 0.9}, ""},
		{"threshold under default", PurposeGroup, DecisionSettings{Threshold: "0.8"}, Test{}, "winnow_threshold"},
		{"confidence under lcs", PurposeGroup, DecisionSettings{Method: "lcs", MinConfidence: "0.8"}, Test{}, "winnow_min_confidence"},
		{"confidence not a number", PurposeGroup, DecisionSettings{MinConfidence: "high"}, Test{}, "winnow_min_confidence"},
		{"confidence 0", PurposeGroup, DecisionSettings{MinConfidence: "0"}, Test{}, "winnow_min_confidence"},
		{"supershingles 7", PurposeGroup, DecisionSettings{Method: "supershingles", Threshold: "7"}, Test{}, "winnow_threshold"},
		{"bloom NaN", PurposeGroup, DecisionSettings{Method: "bloom", Threshold: "NaN"}, Test{}, "winnow_threshold"},
		{"unknown", PurposeGroup, DecisionSettings{Method: "cosine"}, Test{}, "winnow_method"},
		// A confidence no pair reaches would silently turn the mode off.
		{"confidence above the group model's ceiling", PurposeGroup, DecisionSettings{MinConfidence: "0.98"}, Test{}, "winnow_min_confidence"},
		{"confidence above the remove model's ceiling", PurposeRemove, DecisionSettings{MinConfidence: "0.99"}, Test{}, "winnow_min_confidence"},
		{"confidence under the remove model's ceiling", PurposeRemove, DecisionSettings{MinConfidence: "0.98"}, Test{MethodModel, 0.98}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDecision(tt.p, tt.s, f, 10)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr+":") {
					t.Errorf("ParseDecision(%+v) error = %v, want one naming %s", tt.s, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.verify(); got != tt.want || d.Purpose != tt.p || d.MinTokens != 10 {
				t.Errorf("ParseDecision(%+v) = verify %+v, purpose %v, min tokens %d; want %+v, %v, 10", tt.s, got, d.Purpose, d.MinTokens, tt.want, tt.p)
			}
		})
	}
}

// TestNewDecisionMatchesParse: the typed path the configuration takes and
// the text path of request parameters build the same decision, and refuse
// the same settings with the same message.
func TestNewDecisionMatchesParse(t *testing.T) {
	f := DecisionFields{Method: "m", Threshold: "t", MinConfidence: "c"}
	for _, c := range []struct {
		method    string
		threshold string
		conf      string
	}{
		{"", "", ""}, {"default", "", "0.8"}, {"model", "", "0.999999"}, {"", "", "1.5"}, {"", "0.5", ""},
		{"simhash", "3", ""}, {"simhash", "3.5", ""}, {"jaccard", "0.7", ""}, {"jaccard", "", "0.9"}, {"lcs", "", ""},
	} {
		for _, p := range []Purpose{PurposeGroup, PurposeRemove} {
			want, werr := ParseDecision(p, DecisionSettings{Method: c.method, Threshold: c.threshold, MinConfidence: c.conf}, f, 10)
			spec := DecisionSpec{Method: c.method}
			if c.threshold != "" {
				spec.Threshold, spec.HasThreshold = mustFloat(t, c.threshold), true
			}
			if c.conf != "" {
				spec.MinConfidence, spec.HasMinConfidence = mustFloat(t, c.conf), true
			}
			got, gerr := NewDecision(p, spec, f, 10)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("%+v %v: ParseDecision error %v, NewDecision error %v", c, p, werr, gerr)
				continue
			}
			if werr == nil && (got.Verify != want.Verify || got.Purpose != want.Purpose || got.MinTokens != want.MinTokens || !reflect.DeepEqual(got, want)) {
				t.Errorf("%+v %v: NewDecision %+v, ParseDecision %+v", c, p, got, want)
			}
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
