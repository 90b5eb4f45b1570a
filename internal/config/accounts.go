package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// DefaultAccountName is the account the top-level settings describe. Its
// rows have always been stored under this id, so a home that predates
// several accounts keeps its history.
const DefaultAccountName = "default"

// accountKeys are the keys an [accounts.NAME] section may set: what may
// differ between brands run from one home. Everything else (X app
// credentials, LLM, storage, the MCP server) is shared by the home.
var accountKeys = []string{"approval_mode", "business", "evergreen", "intervals", "limits", "mcp_policy", "mode", "queue", "schedule", "scoring", "targets", "x_api"}

// accountXAPIKeys are the x_api keys an account section may set: what
// the account's X subscription allows; the X app itself is the home's.
var accountXAPIKeys = []string{"access", "ai_replies_approved", "max_post_length", "own_replies_summon"}

// AccountKeys lists the keys an [accounts.NAME] section may set.
func AccountKeys() []string { return slices.Clone(accountKeys) }

// namePattern is an account's or a notification channel's name without
// its length: validName bounds that apart, because a bounded repetition
// ({0,31}) compiles to a copy of the class per repeat, kilobytes that every
// process would keep.
var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })

// validName reports whether s is 1-32 of a-z, 0-9, _ and -, starting with
// a letter or digit.
func validName(s string) bool { return len(s) <= 32 && namePattern().MatchString(s) }

// AccountNames lists the accounts of the home: default first, then the
// [accounts.NAME] sections in name order.
func (c *Config) AccountNames() []string {
	out := []string{DefaultAccountName}
	names := make([]string, 0, len(c.Accounts))
	for n := range c.Accounts {
		names = append(names, n)
	}
	sort.Strings(names)
	return append(out, names...)
}

// HasAccount reports whether name is one of the home's accounts.
func (c *Config) HasAccount(name string) bool {
	if name == DefaultAccountName {
		return true
	}
	_, ok := c.Accounts[name]
	return ok
}

// SelectAccount names the account a command or server acts for: the one
// asked for (--account), else default_account, else default.
func (c *Config) SelectAccount(asked string) (string, error) {
	name := asked
	if name == "" {
		name = c.DefaultAccount
	}
	if name == "" {
		name = DefaultAccountName
	}
	if !c.HasAccount(name) {
		return "", fmt.Errorf("unknown account %q; the accounts are: %s (add one as an [accounts.%s] section)",
			name, strings.Join(c.AccountNames(), ", "), name)
	}
	return name, nil
}

// TokenFileFor is where the OAuth tokens of account name live. The default
// account keeps tokens.json; every other account has its own file (and so
// its own refresh lock, "<file>.lock").
func (c *Config) TokenFileFor(name string) string {
	if name == "" || name == DefaultAccountName {
		return c.TokenFile()
	}
	return filepath.Join(c.Home, "tokens", name+".json")
}

// TokenFiles lists every account's token file.
func (c *Config) TokenFiles() []string {
	var out []string
	for _, n := range c.AccountNames() {
		out = append(out, c.TokenFileFor(n))
	}
	return out
}

// ForAccount returns the effective configuration of account name: the
// top-level settings with the account's section applied on top. The
// default account's is c itself. The result has no accounts of its own.
func (c *Config) ForAccount(name string) (*Config, error) {
	if name == "" || name == DefaultAccountName {
		return c, nil
	}
	over, ok := c.Accounts[name]
	if !ok {
		return nil, fmt.Errorf("unknown account %q; the accounts are: %s", name, strings.Join(c.AccountNames(), ", "))
	}
	out := deepCopy(reflect.ValueOf(c).Elem()).Interface().(Config)
	out.Accounts = nil
	out.DefaultAccount = ""
	prefix := "accounts." + name
	var es Errors
	for _, k := range sortedKeys(over) {
		if !slices.Contains(accountKeys, k) {
			es = append(es, &FieldError{Key: prefix + "." + k, Message: "an account cannot override this key; allowed keys: " + strings.Join(accountKeys, ", ")})
		}
		if k != "x_api" {
			continue
		}
		sub, _ := over[k].(map[string]any)
		for _, sk := range sortedKeys(sub) {
			if !slices.Contains(accountXAPIKeys, sk) {
				es = append(es, &FieldError{Key: prefix + ".x_api." + sk, Message: "an account cannot override this key; allowed x_api keys: " + strings.Join(accountXAPIKeys, ", ")})
			}
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	// The section is applied by decoding it onto the copy: a key it sets
	// replaces the inherited value, one it leaves out keeps it.
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(over); err != nil {
		return nil, &FieldError{Key: prefix, Message: err.Error()}
	}
	md, err := toml.Decode(b.String(), &out)
	if err != nil {
		return nil, &FieldError{Key: prefix, Message: err.Error()}
	}
	for _, k := range md.Undecoded() {
		es = append(es, &FieldError{Key: prefix + "." + k.String(), Message: "unknown key; " + allowedHint(k)})
	}
	if len(es) > 0 {
		return nil, es
	}
	if md.IsDefined("mcp_policy", "require_approval_for") {
		out.MCPPolicy.RequireApprovalForSet = !slices.Equal(out.MCPPolicy.RequireApprovalFor, Default().MCPPolicy.RequireApprovalFor)
	}
	return &out, nil
}

// validateAccounts checks the [accounts.NAME] sections: their names, what
// they override and that each account's effective settings are valid.
func (c *Config) validateAccounts(add func(key, format string, args ...any)) {
	if c.DefaultAccount != "" && !c.HasAccount(c.DefaultAccount) {
		add("default_account", "%q is not an account; the accounts are: %s", c.DefaultAccount, strings.Join(c.AccountNames(), ", "))
	}
	for _, name := range sortedKeys(c.Accounts) {
		key := "accounts." + name
		switch {
		case name == DefaultAccountName:
			add(key, "the top-level settings are the default account; give other accounts other names")
			continue
		case !validName(name):
			add(key, "an account name is 1-32 of a-z, 0-9, _ and -, starting with a letter or digit")
			continue
		}
		acc, err := c.ForAccount(name)
		if err == nil {
			err = acc.Validate()
		}
		if err == nil {
			continue
		}
		if es, ok := AsErrors(err); ok {
			for _, e := range es {
				k := e.Key
				if !strings.HasPrefix(k, key+".") {
					k = key + "." + k
				}
				add(k, "%s", e.Message)
			}
			continue
		}
		var fe *FieldError
		if asFieldError(err, &fe) {
			add(fe.Key, "%s", fe.Message)
			continue
		}
		add(key, "%v", err)
	}
}

func asFieldError(err error, target **FieldError) bool {
	fe, ok := err.(*FieldError)
	if ok {
		*target = fe
	}
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Clone returns a copy of c that shares no slice, map or pointer with it,
// so that changing one never changes the other.
func (c *Config) Clone() *Config {
	out := deepCopy(reflect.ValueOf(c).Elem()).Interface().(Config)
	return &out
}

// deepCopy copies v so that decoding onto the copy can never write through
// a slice, map or pointer it shares with the original.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			if out.Field(i).CanSet() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(deepCopy(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := deepCopy(v.Elem())
		out := reflect.New(v.Type()).Elem()
		out.Set(c)
		return out
	}
	return v
}
