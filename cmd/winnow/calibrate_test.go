package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// licencePair returns the absolute path of a page of eval's licence
// pairs (eval/testdata/pairs/pairs/<p>).
func licencePair(t *testing.T) func(p string) string {
	return func(p string) string {
		a, err := filepath.Abs(filepath.Join("../../eval/testdata/pairs/pairs", p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestCalibrateFlaggedOnAnotherSource: a calibration fitted on a source
// where the target precision cannot hold under cross-validation (here a
// list of real licence-text pairs whose labels say the edited copy is
// another page and another licence the same) says so in its YAML, and
// applied with -config to another source it is flagged at start and in
// every explanation.
func TestCalibrateFlaggedOnAnotherSource(t *testing.T) {
	dir := t.TempDir()
	abs := licencePair(t)
	list := "a\tb\tlabel\n" +
		abs("p1/gpl.txt") + "\t" + abs("p1/gpl-edited.txt") + "\tdistinct\n" +
		abs("p2/gpl.txt") + "\t" + abs("p2/apache.txt") + "\tsame\n" +
		abs("p4/lgpl.txt") + "\t" + abs("p4/mpl.txt") + "\t0\n"
	listPath := filepath.Join(dir, "site.tsv")
	if err := os.WriteFile(listPath, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	cal := filepath.Join(dir, "cal.yaml")
	code, out, errs := winnow(t, "", "calibrate", "-mode", "remove", "-repeats", "2", "-o", cal, listPath)
	if code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, errs)
	}
	for _, want := range []string{"calibrate remove on site: 3 pairs, 1 content-equivalent", "too few pairs to tell", "DOES NOT HOLD the target 0.950"} {
		if !strings.Contains(out, want) {
			t.Errorf("calibrate output lacks %q:\n%s", want, out)
		}
	}
	y, err := os.ReadFile(cal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "holds_target: false") || !strings.Contains(string(y), "source: site") {
		t.Errorf("calibration YAML:\n%s\nwant source: site and holds_target: false", y)
	}

	// Applied to another source: eval on the licence set, compare on two
	// of its pages.
	code, _, errs = winnow(t, "", "-config", cal, "eval", "../../eval/testdata/pairs")
	if code != 0 || !strings.Contains(errs, "calibration_not_holding") || !strings.Contains(errs, "source=site") {
		t.Errorf("eval -config: exit %d, stderr %q; want it to run and warn that the calibration did not hold", code, errs)
	}
	code, out, _ = winnow(t, "", "-config", cal, "compare", abs("p1/gpl.txt"), abs("p1/gpl-edited.txt"))
	if code != 0 || !strings.Contains(out, "calibrated on site, NOT HOLDING its target") {
		t.Errorf("compare -config: exit %d, output:\n%s\nwant the remove verdict flagged", code, out)
	}
}

// TestCalibrateNamesItsCap: pairs signed with another word-sequence
// length (-set signature.max_seq) give a fragment that carries it, and
// the fragment runs with -config: whether a sequence was cut, which a
// calibration may refuse, depends on it. The default length adds
// nothing.
func TestCalibrateNamesItsCap(t *testing.T) {
	dir := t.TempDir()
	abs := licencePair(t)
	list := "a\tb\tlabel\n" + abs("p1/gpl.txt") + "\t" + abs("p1/gpl-edited.txt") + "\tdistinct\n" +
		abs("p2/gpl.txt") + "\t" + abs("p2/apache.txt") + "\tsame\n"
	listPath := filepath.Join(dir, "site.tsv")
	if err := os.WriteFile(listPath, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ set, want string }{{"signature.max_seq=16384", "signature:\n    max_seq: 16384\n"}, {"signature.max_seq=8192", ""}} {
		cal := filepath.Join(dir, "cal.yaml")
		if code, _, errs := winnow(t, "", "-set", c.set, "calibrate", "-repeats", "1", "-o", cal, listPath); code != 0 {
			t.Fatalf("calibrate -set %s: exit %d: %s", c.set, code, errs)
		}
		y, err := os.ReadFile(cal)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(y), "max_seq"); c.want == "" && got || c.want != "" && !strings.Contains(string(y), c.want) {
			t.Errorf("-set %s: fragment\n%s\nwant %q", c.set, y, c.want)
		}
		if code, _, errs := winnow(t, "", "-config", cal, "compare", abs("p1/gpl.txt"), abs("p1/gpl-edited.txt")); code != 0 {
			t.Errorf("compare -config with the fragment of -set %s: exit %d: %s", c.set, code, errs)
		}
	}
}

// TestCompareNumbersOnlyPages: a real shop page (canon's testdata) and the
// same page with its two prices changed align word for word (LCS 1); the
// group decision groups them; the shipped remove decision does not remove
// one behind the other (its numbers-only rule, docs/calibration.md) and
// names the numbers that differ; a site calibrated with the blanket
// numbers veto refuses it too, and says why.
func TestCompareNumbersOnlyPages(t *testing.T) {
	page, err := os.ReadFile("../../canon/testdata/pages/de.happycoffee.org.sidamo.html")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "stock-a.html"), filepath.Join(dir, "stock-b.html")
	changed := strings.NewReplacer("€27.90", "€31.50", "€33.80", "€38.60").Replace(string(page))
	if changed == string(page) {
		t.Fatal("the fixture's prices are not in the page")
	}
	if err := os.WriteFile(a, page, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := winnow(t, "", "-set", "canon.content=all", "compare", a, b)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	for _, want := range []string{"group    duplicate", "remove   none", "only numbers differ", "numbers differ: 27/31, 90/50"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s\nwant grouped, not removed as only numbers differ, and the numbers named", want, out)
		}
	}
	veto := filepath.Join(dir, "veto.yaml")
	y := "decision:\n  calibration:\n    remove:\n      source: shop\n      min_confidence: 0.9\n      numbers_veto: true\n      target_precision: 0.95\n      precision: 0.97\n      holds_target: true\n"
	if err := os.WriteFile(veto, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = winnow(t, "", "-config", veto, "-set", "canon.content=all", "compare", a, b)
	if code != 0 {
		t.Fatalf("compare -config: exit %d: %s", code, errs)
	}
	for _, want := range []string{"group    duplicate", "remove   none", "numbers veto", "numbers differ: 27/31", "calibrated on shop"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare with the numbers veto lacks %q:\n%s", want, out)
		}
	}
}

// TestCompareNumbersOnlyRecords: a real library catalogue record and a
// real Debian changelog (testdata/numbers, README there), each beside a
// copy in which only numbers changed, as two copies of one title in the
// catalogue (copy, item and catalogue numbers) and the next release of
// the package (its version numbers) differ: the group decision groups
// them, the remove decision does not hide one behind the other, and says
// why and which numbers differ.
func TestCompareNumbersOnlyRecords(t *testing.T) {
	for _, c := range []struct {
		file    string
		changed *strings.Replacer
		numbers string
	}{
		{"flatlandromanceo00abbouoft_marc.xml", strings.NewReplacer("AKI-2465", "AKI-2466", "Copy 2.", "Copy 3.", ">31<", ">12<"),
			"3 numbers differ: 2465/2466, 2/3, 31/12"},
		{"bc.changelog.Debian", strings.NewReplacer("1.07.1-3", "1.07.2-1", "1.07.1-2", "1.07.1-3", "version to 4.6.0", "version to 4.6.1"),
			"numbers differ"},
	} {
		t.Run(c.file, func(t *testing.T) {
			a := filepath.Join("testdata", "numbers", c.file)
			page, err := os.ReadFile(a)
			if err != nil {
				t.Fatal(err)
			}
			changed := c.changed.Replace(string(page))
			if changed == string(page) {
				t.Fatal("the fixture's numbers are not in the page")
			}
			b := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(b, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := winnow(t, "", "compare", a, b)
			if code != 0 {
				t.Fatalf("compare: exit %d: %s", code, errs)
			}
			for _, want := range []string{"group    duplicate", "remove   none", "only numbers differ", c.numbers} {
				if !strings.Contains(out, want) {
					t.Errorf("compare lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
