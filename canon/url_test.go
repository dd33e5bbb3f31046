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
		// WHATWG's parse of http(s) URLs.
		{"slashes after scheme", "http:///path", "http://path/"},
		{"no slashes", "http:example.com/a", "http://example.com/a"},
		{"backslashes", "http:\\\\example.com\\a\\b?q=\\", "http://example.com/a/b?q=%5C"},
		{"tabs and newlines", "ht\ttp://exa\nmple.com/a\r\n/b", "http://example.com/a/b"},
		{"control and space trimmed", "\x00 \x1fhttp://example.com/ \x01", "http://example.com/"},
		{"hyphen label", "http://-bücher.example/", "http://xn---bcher-4ya.example/"},
		{"percent-encoded host", "http://%65xample.com/", "http://example.com/"},
		// IPv4 number forms name one host.
		{"ipv4 decimal", "http://2130706433/", "http://127.0.0.1/"},
		{"ipv4 hex", "http://0x7f.1/", "http://127.0.0.1/"},
		{"ipv4 octal", "http://0177.0.0.01/", "http://127.0.0.1/"},
		{"ipv4 hex dotted", "http://0x7F.0x0.0x0.0x1:8080/", "http://127.0.0.1:8080/"},
		{"ipv4 trailing dot", "http://127.0.0.1./", "http://127.0.0.1/"},
		// Two pages never share a key.
		{"slash escape kept with non-ASCII", "http://example.com/a%2Fb/ü", "http://example.com/a%2Fb/%C3%BC"},
		{"escaped slashes are no dot segment", "http://example.com/x%2F..%2Fy/é", "http://example.com/x%2F..%2Fy/%C3%A9"},
		{"reserved escapes kept", "http://example.com/%2B%3B%3D%26%2C%3A%40/ü", "http://example.com/%2B%3B%3D%26%2C%3A%40/%C3%BC"},
		{"hash-bang kept", "http://example.com/#!/products/1", "http://example.com/#!/products/1"},
		{"hash-bang escaped", "http://example.com/app#!/a b/ü", "http://example.com/app#!/a%20b/%C3%BC"},
		{"other fragment dropped", "http://example.com/#/products/1", "http://example.com/"},
		// One page, one key.
		{"jsessionid path", "http://example.com/shop;jsessionid=0A1B2C3D4E/cart;JSESSIONID=x?a=1", "http://example.com/shop/cart?a=1"},
		{"session query", "http://example.com/p?PHPSESSID=abc123&id=7&jsessionid=1&ASPSESSIONIDQQ=x&sessionid=9&session_id=8", "http://example.com/p?id=7"},
		{"sid token", "http://example.com/p?sid=3f2a9c81b4e6d7a05c&id=7", "http://example.com/p?id=7"},
		{"sid not a token", "http://example.com/p?sid=3", "http://example.com/p?sid=3"},
		{"plus and %20", "http://example.com/s?q=a%20b&r=c+d&t=e f", "http://example.com/s?q=a+b&r=c+d&t=e+f"},
		{"escaped plus kept", "http://example.com/s?q=a%2Bb", "http://example.com/s?q=a%2Bb"},
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
		{"empty host", "http:///", ErrHost},
		{"empty host query", "https://?q=1", ErrHost},
		{"bad idna", "http://xn--a.example/", ErrHost},
		{"bad ipv4", "http://1.2.3.256/", ErrHost},
		{"ipv4 too many parts", "http://1.2.3.4.5/", ErrHost},
		{"not ipv4", "http://foo.09/", ErrHost},
		{"forbidden host", "http://exa%3Cmple.com/", ErrHost},
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
		{"foo.09..", "foo.09"},
		{"example.com...", "example.com"},
		{"2130706433", "127.0.0.1"},
		{"0x7f.1:8080", "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := HostKey(tt.in); got != tt.want {
				t.Errorf("HostKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := HostKey(tt.want); again != tt.want {
				t.Errorf("HostKey(%q) = %q, want it unchanged", tt.want, again)
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
		"foo.09..", "http://0x7f.1/#!/a", "http:\\\\x\\y;jsessionid=1?sid=abcdef0123456789",
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
		if h := HostKey(raw); HostKey(h) != h {
			t.Fatalf("HostKey(%q) = %q, then %q", raw, h, HostKey(h))
		}
	})
}

func TestDomainToASCII(t *testing.T) {
	tests := []struct{ host, want string }{
		{"example.com", "example.com"},
		{"my_host.example", "my_host.example"},
		{"my_host.bücher.example", "my_host.xn--bcher-kva.example"},
		{"_dmarc.BÜCHER.example", "_dmarc.xn--bcher-kva.example"},
		{"ＢÜCHER．example", "xn--bcher-kva.example"}, // full-width letters and dot
		{"a--b.bücher.example", "a--b.xn--bcher-kva.example"},
		{"a／b.bücher.example", "error"},      // full-width solidus maps to "/"
		{"a\u200db.bücher.example", "error"}, // a zero width joiner out of context
	}
	for _, tt := range tests {
		got, err := DomainToASCII(tt.host)
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("DomainToASCII(%q) = %q, %v, want %q", tt.host, got, err, tt.want)
		}
	}
}
