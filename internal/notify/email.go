package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/textproto"

	mail "github.com/wneessen/go-mail"

	"github.com/tuitbot/tuitbot/internal/config"
)

// Email sends a plain-text mail per message. It carries the view link
// only: mail scanners open every link they find, and a view changes
// nothing. The post's text goes into the body alone; the subject holds
// only the tool's name and the event, on one line, so no header can be
// written from a post.
type Email struct {
	name           string
	host           string
	port           int
	from           string
	to             []string
	user, password string
	tlsMode        string
	// TLSConfig overrides the TLS settings (tests trust their own CA).
	TLSConfig *tls.Config
}

// NewEmail builds the channel from its configuration and password.
func NewEmail(ch config.NotifyChannel, password string) *Email {
	return &Email{name: ch.Name, host: ch.SMTPHost, port: ch.SMTPPort, from: ch.From, to: ch.To, user: ch.Username,
		password: password, tlsMode: ch.TLS}
}

func (e *Email) Name() string { return e.name }
func (e *Email) Type() string { return config.ChannelEmail }

// credentials: the SMTP password.
func (e *Email) credentials() []string { return []string{e.password} }

// emailMessage builds the mail for m.
func (e *Email) emailMessage(m Message) (*mail.Msg, error) {
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	if err := msg.From(e.from); err != nil {
		return nil, fmt.Errorf("from %q: %w", e.from, err)
	}
	if err := msg.To(e.to...); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	msg.Subject("tuitbot: " + oneLine(Title(m), 150))
	msg.SetMessageID()
	msg.SetDate()
	// View links only: strip the acting ones whatever the caller passed.
	view := m
	view.Links = make([]Links, len(m.Links))
	for i, l := range m.Links {
		view.Links[i] = Links{View: l.View}
	}
	msg.SetBodyString(mail.TypeTextPlain, PlainText(view)+"\n\n-- \nSent by tuitbot. Open the review link to approve or reject; the link works once.\n")
	return msg, nil
}

func (e *Email) Send(ctx context.Context, m Message) (string, error) {
	msg, err := e.emailMessage(m)
	if err != nil {
		return "", &SendError{Permanent: true, Err: err}
	}
	opts := []mail.Option{mail.WithPort(e.port)}
	tc := e.TLSConfig
	if tc == nil {
		tc = &tls.Config{ServerName: e.host, MinVersion: tls.VersionTLS12}
	}
	switch e.tlsMode {
	case "tls":
		opts = append(opts, mail.WithSSL(), mail.WithTLSConfig(tc))
	case "none":
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory), mail.WithTLSConfig(tc))
	}
	if e.user != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(e.user), mail.WithPassword(e.password))
	}
	c, err := mail.NewClient(e.host, opts...)
	if err != nil {
		return "", &SendError{Permanent: true, Err: fmt.Errorf("smtp client: %w", err)}
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return "", classifySMTP(err)
	}
	return "", nil
}

// classifySMTP makes an SMTP failure a SendError: a 5xx reply is
// permanent (a refused sender, recipient or login), anything else is
// retried.
func classifySMTP(err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return &SendError{Status: te.Code, Permanent: te.Code >= 500, Err: err}
	}
	var se *mail.SendError
	if errors.As(err, &se) {
		if code := se.ErrorCode(); code != 0 {
			return &SendError{Status: code, Permanent: code >= 500, Err: err}
		}
	}
	return &SendError{Err: err}
}
