package renumber

import "testing"

func TestShiftDigits(t *testing.T) {
	in := `<p class="c9">Price 19,99 € for 2</p><a href="/x/42">gfx10</a>`
	want := `<p class="c9">Price 42,22 € for 5</p><a href="/x/42">gfx43</a>`
	if got := string(ShiftDigits([]byte(in))); got != want {
		t.Errorf("ShiftDigits(%q) =\n%q, want\n%q", in, got, want)
	}
}

func TestRewordAfterNumbers(t *testing.T) {
	in := `<p class="c9 x">Price 19,99 euro for 2 cats</p><a href="/x/42 y">gfx10</a>`
	want := `<p class="c9 x">Price 19,99 zzz for 2 zzz</p><a href="/x/42 y">gfx10</a>`
	if got := string(RewordAfterNumbers([]byte(in))); got != want {
		t.Errorf("RewordAfterNumbers(%q) =\n%q, want\n%q", in, got, want)
	}
}
