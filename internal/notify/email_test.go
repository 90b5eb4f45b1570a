package notify

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/testcert"
)

// smtpSink is a local SMTP server (go-smtp) keeping every envelope and
// message it accepts.
type smtpSink struct {
	mu   sync.Mutex
	got  []sunkMail
	user string
	pass string
	// reject answers RCPT with this SMTP code when set.
	reject int
}

type sunkMail struct {
	From string
	To   []string
	Data []byte
	Auth string
}

type sinkSession struct {
	s    *smtpSink
	from string
	to   []string
	auth string
}

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *sinkSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.s.user || pass != s.s.pass {
			return errors.New("invalid credentials")
		}
		s.auth = user
		return nil
	}), nil
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error { s.from = from; return nil }

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.s.reject != 0 {
		return &smtp.SMTPError{Code: s.s.reject, Message: "mailbox unavailable"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.s.mu.Lock()
	s.s.got = append(s.s.got, sunkMail{From: s.from, To: s.to, Data: b, Auth: s.auth})
	s.s.mu.Unlock()
	return nil
}

func (s *sinkSession) Reset()        { s.from, s.to = "", nil }
func (s *sinkSession) Logout() error { return nil }

func (s *smtpSink) mails() []sunkMail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sunkMail(nil), s.got...)
}

// startSMTP runs the sink on loopback; with cert it offers STARTTLS.
func startSMTP(t *testing.T, sink *smtpSink, cert *tls.Certificate) int {
	t.Helper()
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: sink}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = cert == nil
	if cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	c := testcert.New(t)
	return c.Cert, c.Pool
}

// A post whose text carries "\r\nBcc:" and other header lines only ever
// lands in the body: the mail has the configured recipients, one subject
// line and no injected header. It carries the view link, never an acting
// one.
func TestEmailCannotBeGivenHeadersByPostText(t *testing.T) {
	sink := &smtpSink{}
	port := startSMTP(t, sink, nil)
	e := NewEmail(config.NotifyChannel{Name: "mail", SMTPHost: "127.0.0.1", SMTPPort: port, From: "bot@example.com",
		To: []string{"me@example.com"}, TLS: "none"}, "")
	hostile := "hi\r\nBcc: victim@evil.example\r\nSubject: pwned\r\n\r\nX-Injected: yes"
	m := oneItem(hostile, someLinks)
	m.Items[0].Tool = "x_post_tweet\r\nBcc: tool@evil.example"
	if _, err := e.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := sink.mails()
	if len(got) != 1 {
		t.Fatalf("%d mails", len(got))
	}
	if len(got[0].To) != 1 || got[0].To[0] != "me@example.com" || got[0].From != "bot@example.com" {
		t.Fatalf("envelope from %q to %v", got[0].From, got[0].To)
	}
	msg, err := mail.ReadMessage(bufio.NewReader(strings.NewReader(string(got[0].Data))))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Bcc", "X-Injected"} {
		if v := msg.Header.Get(h); v != "" {
			t.Errorf("injected header %s: %q", h, v)
		}
	}
	if subj := msg.Header["Subject"]; len(subj) != 1 || strings.Contains(subj[0], "pwned") {
		t.Errorf("subject %q", subj)
	}
	body, _ := io.ReadAll(msg.Body)
	if !strings.Contains(string(body), someLinks.View) {
		t.Errorf("the view link is missing from the body:\n%s", body)
	}
	for _, acting := range []string{someLinks.Approve, someLinks.Reject, someLinks.ApproveCSRF, someLinks.RejectCSRF} {
		if strings.Contains(string(got[0].Data), acting) {
			t.Errorf("the mail carries %q; it must carry the view link only", acting)
		}
	}
}

// With STARTTLS and a login, the mail goes over TLS to a server the client
// verifies; a refused recipient (5xx) is a permanent failure.
func TestEmailStartTLSAndAuth(t *testing.T) {
	cert, pool := selfSigned(t)
	sink := &smtpSink{user: "bot", pass: "s3cret-pass"}
	port := startSMTP(t, sink, &cert)
	e := NewEmail(config.NotifyChannel{Name: "mail", SMTPHost: "127.0.0.1", SMTPPort: port, From: "bot@example.com",
		To: []string{"me@example.com"}, Username: "bot", TLS: "starttls"}, "s3cret-pass")
	e.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if _, err := e.Send(context.Background(), oneItem("hello", someLinks)); err != nil {
		t.Fatal(err)
	}
	if got := sink.mails(); len(got) != 1 || got[0].Auth != "bot" {
		t.Fatalf("mails %+v", got)
	}
	// Without trusting the server's certificate nothing is sent.
	e.TLSConfig = &tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if _, err := e.Send(context.Background(), oneItem("hello", someLinks)); err == nil {
		t.Fatal("sent to a server whose certificate is not trusted")
	}
	sink.reject = 550
	e.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	_, err := e.Send(context.Background(), oneItem("hello", someLinks))
	var se *SendError
	if !errors.As(err, &se) || !se.Permanent || se.Status != 550 {
		t.Fatalf("refused recipient: %v (%+v)", err, se)
	}
	if strings.Contains(err.Error(), "s3cret-pass") {
		t.Fatalf("error shows the password: %v", err)
	}
}
