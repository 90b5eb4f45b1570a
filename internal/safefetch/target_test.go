package safefetch

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		url    string
		reason string // "" accepts
	}{
		{"https name", Policy{}, "https://media.example.com/a.png", ""},
		{"https port 443", Policy{}, "https://media.example.com:443/a.png", ""},
		{"public literal", Policy{}, "https://8.8.8.8/a.png", ""},
		{"http by default", Policy{}, "http://media.example.com/a.png", ReasonScheme},
		{"http allowed", Policy{AllowHTTP: true}, "http://media.example.com/a.png", ""},
		{"ftp", Policy{AllowHTTP: true}, "ftp://media.example.com/a.png", ReasonScheme},
		{"file", Policy{}, "file:///etc/passwd", ReasonScheme},
		{"userinfo", Policy{}, "https://user:pw@media.example.com/a.png", ReasonUserinfo},
		{"user only", Policy{}, "https://user@media.example.com/a.png", ReasonUserinfo},
		{"port 8080", Policy{}, "https://media.example.com:8080/a.png", ReasonPort},
		{"port 22", Policy{}, "https://media.example.com:22/", ReasonPort},
		{"empty port", Policy{}, "https://media.example.com:/", ReasonPort},
		{"no host", Policy{}, "https:///a.png", ReasonHost},
		{"loopback", Policy{}, "https://127.0.0.1/a.png", ReasonLoopback},
		{"loopback high", Policy{}, "https://127.8.9.10/a.png", ReasonLoopback},
		{"loopback v6", Policy{}, "https://[::1]/a.png", ReasonLoopback},
		{"private 10", Policy{}, "https://10.0.0.1/", ReasonPrivate},
		{"private 172", Policy{}, "https://172.16.5.4/", ReasonPrivate},
		{"private 192", Policy{}, "https://192.168.1.1/", ReasonPrivate},
		{"unique local v6", Policy{}, "https://[fd00::1]/", ReasonPrivate},
		{"metadata", Policy{}, "https://169.254.169.254/latest/meta-data/", ReasonLinkLocal},
		{"link-local v6", Policy{}, "https://[fe80::1]/", ReasonLinkLocal},
		{"cgnat", Policy{}, "https://100.64.0.1/", ReasonCGNAT},
		{"unspecified", Policy{}, "https://0.0.0.0/", ReasonUnspecified},
		{"this network", Policy{}, "https://0.1.2.3/", ReasonUnspecified},
		{"unspecified v6", Policy{}, "https://[::]/", ReasonUnspecified},
		{"multicast", Policy{}, "https://224.0.0.1/", ReasonMulticast},
		{"multicast v6", Policy{}, "https://[ff02::1]/", ReasonMulticast},
		{"broadcast", Policy{}, "https://255.255.255.255/", ReasonReserved},
		{"mapped loopback", Policy{}, "https://[::ffff:127.0.0.1]/", ReasonLoopback},
		{"mapped metadata", Policy{}, "https://[::ffff:a9fe:a9fe]/", ReasonLinkLocal},
		{"nat64 metadata", Policy{}, "https://[64:ff9b::169.254.169.254]/", ReasonLinkLocal},
		{"nat64 private", Policy{}, "https://[64:ff9b::a00:1]/", ReasonPrivate},
		{"nat64 public", Policy{}, "https://[64:ff9b::808:808]/", ""},
		{"local nat64", Policy{}, "https://[64:ff9b:1::1]/", ReasonPrivate},
		{"compat loopback", Policy{}, "https://[::127.0.0.1]/", ReasonLoopback},
		{"6to4 loopback", Policy{}, "https://[2002:7f00:1::1]/", ReasonLoopback},
		{"zone", Policy{}, "https://[fe80::1%25eth0]/", ReasonLinkLocal},
		{"allowed private", Policy{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "https://10.1.2.3/", ""},
		{"allowed private, other net", Policy{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "https://192.168.1.1/", ReasonPrivate},
		{"allowed ports", Policy{Ports: []int{8443}}, "https://media.example.com:8443/", ""},
		{"allowed ports replace defaults", Policy{Ports: []int{8443}}, "https://media.example.com:443/", ReasonPort},
		{"allowed host", Policy{AllowHosts: []string{"media.example.com"}}, "https://MEDIA.example.com./a.png", ""},
		{"host not allowed", Policy{AllowHosts: []string{"media.example.com"}}, "https://evil.example.com/a.png", ReasonHostNotAllowed},
		{"wildcard host", Policy{AllowHosts: []string{"*.example.com"}}, "https://cdn.media.example.com/a.png", ""},
		{"wildcard is not the apex", Policy{AllowHosts: []string{"*.example.com"}}, "https://example.com/a.png", ReasonHostNotAllowed},
		{"wildcard is not a suffix", Policy{AllowHosts: []string{"*.example.com"}}, "https://badexample.com/a.png", ReasonHostNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.policy.CheckURL(tt.url)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want accepted", tt.url, err)
				}
				return
			}
			if apperr.CodeOf(err) != apperr.MediaURLBlocked || Reason(err) != tt.reason {
				t.Fatalf("CheckURL(%q) = %v (reason %q), want media_url_blocked for %s", tt.url, err, Reason(err), tt.reason)
			}
			if !strings.HasPrefix(apperr.As(err).Message, "url: ") {
				t.Errorf("the message does not name the url field: %q", apperr.As(err).Message)
			}
		})
	}
}

func TestCheckURLMalformed(t *testing.T) {
	for _, raw := range []string{"", "  ", "https://a b/%zz", "://x"} {
		if _, err := (Policy{}).CheckURL(raw); apperr.CodeOf(err) != apperr.InvalidInput {
			t.Errorf("CheckURL(%q) = %v, want invalid_input", raw, err)
		}
	}
}

// FuzzCheckURL: CheckURL never panics, and whatever it accepts is https on
// an allowed port without credentials, and a literal host is public.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://media.example.com/a.png", "http://127.0.0.1/", "https://[::ffff:169.254.169.254]/",
		"https://u:p@x/", "https://x:99999/", "https://[64:ff9b::7f00:1]:443/", "https://2130706433/",
		"https://0x7f.1/", "https://[fe80::1%25lo]/", "HTTPS://EXAMPLE.COM:443", "https://x.y:0443/",
	} {
		f.Add(s)
	}
	p := Policy{}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := p.CheckURL(raw)
		if err != nil {
			if c := apperr.CodeOf(err); c != apperr.MediaURLBlocked && c != apperr.InvalidInput {
				t.Fatalf("CheckURL(%q) = %v, want media_url_blocked or invalid_input", raw, err)
			}
			return
		}
		if u.Scheme != "https" || u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q: scheme %q, user %v, host %q", raw, u.Scheme, u.User, u.Hostname())
		}
		if port := u.Port(); port != "" && port != "443" && port != "80" {
			t.Fatalf("accepted %q with port %q", raw, port)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil && classify(a) != "" {
			t.Fatalf("accepted %q, a %s address", raw, classify(a))
		}
		// What is accepted must still parse the same way when sent.
		again, err := url.Parse(u.String())
		if err != nil || again.Hostname() != u.Hostname() || again.Port() != u.Port() {
			t.Fatalf("accepted %q re-parses as host %q port %q (%v)", raw, again.Hostname(), again.Port(), err)
		}
	})
}
