package canon

import (
	"errors"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"case", "HTTP://WWW.Example.COM/Path", "http://www.example.com/Path"},
		{"space", "  https://example.com/a  ", "https://example.com/a"},
		{"default port http", "http://example.com:80/", "http://example.com/"},
		{"default port https", "https://example.com:443/x", "https://example.com/x"},
		{"other port", "https://example.com:8443/x", "https://example.com:8443/x"},
		{"port on wrong scheme", "http://example.com:443/", "http://example.com:443/"},
		{"empty port", "http://example.com:/a", "http://example.com/a"},
		{"port leading zero", "http://example.com:0080/", "http://example.com/"},
		{"fragment", "http://example.com/a#section", "http://example.com/a"},
		{"userinfo", "http://user:pw@example.com/", "http://example.com/"},
		{"empty path", "http://example.com", "http://example.com/"},
		{"empty path query", "http://example.com?b=1", "http://example.com/?b=1"},
		{"decode unreserved", "http://example.com/%7Euser/%61b%2D", "http://example.com/~user/ab-"},
		{"upper hex", "http://example.com/a%2fb%c3%bc", "http://example.com/a%2Fb%C3%BC"},
		{"encode", "http://example.com/a b/ü", "http://example.com/a%20b/%C3%BC"},
		{"bad escape", "http://example.com/100%25", "http://example.com/100%25"},
		{"dot segments", "http://example.com/a/./b/../c/", "http://example.com/a/c/"},
		{"dot escaped", "http://example.com/a/%2E%2E/b", "http://example.com/b"},
		{"dot above root", "http://example.com/../../a", "http://example.com/a"},
		{"dot last", "http://example.com/a/b/..", "http://example.com/a/"},
		{"double slash kept", "http://example.com//a//b", "http://example.com//a//b"},
		{"trailing slash kept", "http://example.com/a/", "http://example.com/a/"},
		{"index kept", "http://example.com/index.html", "http://example.com/index.html"},
		{"query sorted", "http://example.com/?b=2&a=1&c", "http://example.com/?a=1&b=2&c"},
		{"query stable", "http://example.com/?b=2&a=3&b=1&a=1", "http://example.com/?a=3&a=1&b=2&b=1"},
		{"query escape", "http://example.com/?q=a%2bb&r=%7e+x", "http://example.com/?q=a%2Bb&r=~+x"},
		{"query value equals", "http://example.com/?k=YQ==", "http://example.com/?k=YQ=="},
		{"tracking", "http://example.com/p?utm_source=x&id=7&UTM_Medium=y&gclid=1&fbclid=2&msclkid=3", "http://example.com/p?id=7"},
		{"tracking more", "http://example.com/?dclid=1&yclid=2&mc_cid=3&mc_eid=4&_ga=5&_hsenc=6&_hsmi=7&igshid=8&ref_src=9", "http://example.com/"},
		{"tracking escaped key", "http://example.com/?utm%5Fsource=x&a=1", "http://example.com/?a=1"},
		{"trailing question", "http://example.com/a?", "http://example.com/a"},
		{"empty params", "http://example.com/a?&&x=1&", "http://example.com/a?x=1"},
		{"idna", "http://Bücher.example/a", "http://xn--bcher-kva.example/a"},
		{"idna fullwidth", "http://ｅｘａｍｐｌｅ.com/", "http://example.com/"},
		{"punycode", "http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
		{"trailing dot", "http://example.com./", "http://example.com/"},
		{"underscore host", "http://my_host.example.com/", "http://my_host.example.com/"},
		{"ipv4", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/"},
		{"ipv6", "http://[2001:DB8:0:0::1]:80/", "http://[2001:db8::1]/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := URL(tt.in)
			if err != nil {
				t.Fatalf("URL(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again, err := URL(got); err != nil || again != got {
				t.Errorf("URL(%q) = %q, %v, want it unchanged", got, again, err)
			}
		})
	}
}

func TestURLErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"ftp", "ftp://example.com/", ErrScheme},
		{"mailto", "mailto:a@example.com", ErrScheme},
		{"javascript", "javascript:alert(1)", ErrScheme},
		{"relative", "/path/only", ErrScheme},
		{"empty", "", ErrScheme},
		{"empty host", "http:///path", ErrHost},
		{"opaque", "http:example.com", ErrHost},
		{"bad idna", "http://xn--a.example/", ErrHost},
		{"bad idna hyphen", "http://-bücher.example/", ErrHost},
		{"empty label", "http://a..b/", ErrHost},
		{"ipv6 zone", "http://[fe80::1%25eth0]/", ErrHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := URL(tt.in)
			if !errors.Is(err, tt.want) {
				t.Errorf("URL(%q) = %q, %v, want error %v", tt.in, got, err, tt.want)
			}
		})
	}
	for _, in := range []string{"http://example.com:99999/", "http://exa mple.com/", "http://example.com:x/", "http://[::1/"} {
		if got, err := URL(in); err == nil {
			t.Errorf("URL(%q) = %q, want an error", in, got)
		}
	}
}

func TestHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"www.example.com", "example.com"},
		{"example.com", "example.com"},
		{"www2.example.com", "example.com"},
		{"m.example.com", "example.com"},
		{"mobile.example.com", "example.com"},
		{"amp.example.com", "example.com"},
		{"WWW.Example.COM", "example.com"},
		{"www.example.com:8080", "example.com"},
		{"www.example.com.", "example.com"},
		{"www.m.example.com", "example.com"},
		{"news.example.com", "news.example.com"},
		{"www.news.example.com", "news.example.com"},
		{"www.example.co.uk", "example.co.uk"},
		{"www.co.uk", "www.co.uk"},
		{"m.com", "m.com"},
		{"www.com", "www.com"},
		{"www10.example.com", "www10.example.com"},
		{"wwwexample.com", "wwwexample.com"},
		{"www.bücher.example", "xn--bcher-kva.example"},
		{"127.0.0.1:80", "127.0.0.1"},
		{"[2001:db8::1]:443", "[2001:db8::1]"},
		{"www.github.io", "www.github.io"},
		{"www.foo.github.io", "foo.github.io"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := HostKey(tt.in); got != tt.want {
				t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTPS://WWW.Example.COM:443/a/../b/./c?utm_source=x&b=2&a=1#frag",
		"http://Bücher.example/%7e%2f%zz?q=a+b&&=", "http://[2001:db8::1]:8080/p", "http://a/b/c/./../../g",
		"http://example.com/%2E%2E/%2e/x", "http://u:p@host:80?", "http://example.com/a%", "http://x.com/?a=%3D%26&b",
		"http://example.com/;p=1?q=2", "http://example.com/[a]", "http://ｅｘａｍｐｌｅ.com/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := URL(raw)
		if err != nil {
			return
		}
		v, err := URL(u)
		if err != nil {
			t.Fatalf("URL(%q) = %q, then URL(%q) error: %v", raw, u, u, err)
		}
		if v != u {
			t.Fatalf("URL(%q) = %q, then URL(%q) = %q, want it unchanged", raw, u, u, v)
		}
		_ = HostKey(raw)
	})
}
