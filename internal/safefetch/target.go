// Package safefetch downloads from URLs an agent names without letting the
// request reach this host, its network or a cloud metadata service. The
// address actually connected to is checked, not the one a name resolved to
// earlier, so a name that changes its answer between checks gains nothing.
package safefetch

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Reasons a target is refused; they appear as the error's "reason".
const (
	ReasonScheme          = "scheme"
	ReasonUserinfo        = "userinfo"
	ReasonPort            = "port"
	ReasonHost            = "host"
	ReasonHostNotAllowed  = "host_not_allowed"
	ReasonLoopback        = "loopback"
	ReasonPrivate         = "private"
	ReasonLinkLocal       = "link_local"
	ReasonCGNAT           = "cgnat"
	ReasonUnspecified     = "unspecified"
	ReasonMulticast       = "multicast"
	ReasonReserved        = "reserved"
	ReasonTooManyRedirect = "too_many_redirects"
)

// Policy is what a URL and the address it leads to must satisfy.
type Policy struct {
	// AllowHTTP permits plain http besides https.
	AllowHTTP bool
	// AllowHosts, when not empty, are the only hosts fetched: an exact name,
	// or "*.example.com" for its subdomains.
	AllowHosts []string
	// AllowPrivate are networks reachable despite being non-public, for
	// self-hosted media servers.
	AllowPrivate []netip.Prefix
	// Ports are the ports a URL may name; empty means 443 and 80.
	Ports []int
}

// blocked is the error of a refused target.
func blocked(reason, format string, args ...any) error {
	return apperr.New(apperr.MediaURLBlocked, format, args...).With("reason", reason)
}

// Reason returns the reason of a media_url_blocked error, or "".
func Reason(err error) string {
	var e *apperr.Error
	if errors.As(err, &e) && e.Code == apperr.MediaURLBlocked {
		r, _ := e.Extra["reason"].(string)
		return r
	}
	return ""
}

// CheckURL parses raw and checks everything about it that needs no network:
// scheme, userinfo, port, allowed hosts and, for a literal address, the
// address itself.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, apperr.New(apperr.InvalidInput, "url: required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, apperr.New(apperr.InvalidInput, "url: not a URL")
	}
	return u, p.check(u)
}

func (p Policy) check(u *url.URL) error {
	switch u.Scheme {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return blocked(ReasonScheme, "url: http is not allowed, only https (media.url_allow_http)")
		}
	default:
		return blocked(ReasonScheme, "url: the scheme must be https")
	}
	if u.User != nil {
		return blocked(ReasonUserinfo, "url: must not carry a user name or password")
	}
	if u.Opaque != "" {
		return blocked(ReasonHost, "url: not a hierarchical URL")
	}
	host := u.Hostname()
	if host == "" {
		return blocked(ReasonHost, "url: has no host")
	}
	port := u.Port()
	if port == "" && strings.HasSuffix(u.Host, ":") {
		return blocked(ReasonPort, "url: empty port")
	}
	if port != "" {
		// Only the canonical spelling: "0443" is 443 to some parsers and
		// not to others.
		n, err := strconv.Atoi(port)
		if err != nil || strconv.Itoa(n) != port || !p.portAllowed(n) {
			return blocked(ReasonPort, "url: port %s is not allowed (only %s)", port, p.portList())
		}
	}
	if !p.hostAllowed(host) {
		return blocked(ReasonHostNotAllowed, "url: host %s is not in media.url_allow_hosts", host)
	}
	// A literal address is refused here already; a name is checked when
	// its address is connected to.
	if a, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(a)
	}
	if strings.ContainsAny(host, "%[]") {
		return blocked(ReasonHost, "url: malformed host")
	}
	return nil
}

func (p Policy) ports() []int {
	if len(p.Ports) == 0 {
		return []int{443, 80}
	}
	return p.Ports
}

func (p Policy) portAllowed(n int) bool {
	for _, q := range p.ports() {
		if q == n {
			return true
		}
	}
	return false
}

func (p Policy) portList() string {
	var s []string
	for _, q := range p.ports() {
		s = append(s, strconv.Itoa(q))
	}
	return strings.Join(s, ", ")
}

func (p Policy) hostAllowed(host string) bool {
	if len(p.AllowHosts) == 0 {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range p.AllowHosts {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if sfx, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(host, "."+sfx) {
				return true
			}
		} else if host == h {
			return true
		}
	}
	return false
}

// CheckAddr refuses an address that is not public, unless an allowed
// private network holds it. IPv4 addresses written as IPv6 (mapped,
// compatible, NAT64, 6to4) are judged by the IPv4 address inside.
func (p Policy) CheckAddr(a netip.Addr) error {
	a = a.WithZone("")
	for _, pre := range p.AllowPrivate {
		if pre.Contains(a) || pre.Contains(a.Unmap()) {
			return nil
		}
	}
	reason := classify(a)
	if reason == "" {
		return nil
	}
	return blocked(reason, "url: %s is a %s address", a, strings.ReplaceAll(reason, "_", "-"))
}

var (
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	v4Compat    = netip.MustParsePrefix("::/96")
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	siteLocal   = netip.MustParsePrefix("fec0::/10")
	teredo      = netip.MustParsePrefix("2001::/32")
)

// reservedV4 are IPv4 ranges no public media server lives in.
var reservedV4 = []netip.Prefix{
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
}

// classify names why a is not public, or returns "".
func classify(a netip.Addr) string {
	if !a.IsValid() {
		return ReasonUnspecified
	}
	if a.Is4In6() {
		return classify(a.Unmap())
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a), a != netip.IPv6Unspecified() && a != netip.IPv6Loopback() && v4Compat.Contains(a):
			return classify(netip.AddrFrom4([4]byte(b[12:16])))
		case nat64Local.Contains(a):
			return ReasonPrivate
		case sixToFour.Contains(a):
			return classify(netip.AddrFrom4([4]byte(b[2:6])))
		case teredo.Contains(a):
			// The client address inside is obfuscated and the relay may
			// be anywhere: nothing public is served from here.
			return ReasonReserved
		case siteLocal.Contains(a):
			return ReasonPrivate
		}
	}
	switch {
	case a.IsUnspecified(), a.Is4() && thisNetwork.Contains(a):
		return ReasonUnspecified
	case a.IsLoopback():
		return ReasonLoopback
	case a.IsMulticast():
		return ReasonMulticast
	case a.IsLinkLocalUnicast():
		return ReasonLinkLocal
	case a.IsPrivate():
		return ReasonPrivate
	case a.Is4() && cgnat.Contains(a):
		return ReasonCGNAT
	}
	if a.Is4() {
		for _, r := range reservedV4 {
			if r.Contains(a) {
				return ReasonReserved
			}
		}
	}
	if !a.IsGlobalUnicast() {
		return ReasonReserved
	}
	return ""
}
