package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/xauth"
)

// loginSentence tells a person what a successful login did, in words: which
// account, where the tokens went, what they allow and how long they last.
// It never includes a token value.
func loginSentence(account, path string, tok *xauth.Token) string {
	who := "Logged in to X"
	if account != config.DefaultAccountName {
		who = fmt.Sprintf("Logged in to X for account %s", account)
	}
	scopes := "no scopes recorded"
	if len(tok.Scopes) > 0 {
		scopes = "scopes " + strings.Join(tok.Scopes, ", ")
	}
	expiry := "the access token has no recorded expiry"
	if !tok.ExpiresAt.IsZero() {
		expiry = "the access token is valid until " + tok.ExpiresAt.UTC().Format(time.RFC3339)
		if tok.RefreshToken != "" {
			expiry += " and is renewed automatically"
		} else {
			expiry += "; run `tuitbot auth` again then (X sent no refresh token)"
		}
	}
	return fmt.Sprintf("%s. The tokens are saved in %s (readable only by you); %s; %s. Next: `tuitbot doctor`.",
		who, path, scopes, expiry)
}
