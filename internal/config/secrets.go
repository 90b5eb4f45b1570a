package config

import (
	"reflect"
	"strings"
)

// The values of a secret tag. A key tagged secret:"true" holds a
// credential and is masked in every output; one tagged secret:"env" names
// the environment variable that holds one, and that variable's value is
// masked wherever it appears. The tags are the one list of what is secret.
const (
	secretHeld  = "true"
	secretNamed = "env"
)

// SecretSetting is one setting that holds a credential or names where one
// is kept.
type SecretSetting struct {
	// Key is the dotted name; a channel's key reads
	// "notify.channels[].topic".
	Key string
	// Env: the setting names an environment variable, which holds the
	// credential.
	Env bool
}

// SecretSettings lists every setting that holds or names a credential, read
// from the secret tags of the configuration and of a notification channel.
func SecretSettings() []SecretSetting {
	var out []SecretSetting
	def := Default()
	for _, f := range Fields(&def) {
		if f.Secret || f.SecretEnv {
			out = append(out, SecretSetting{Key: f.Name(), Env: f.SecretEnv})
		}
	}
	for _, sf := range channelFields() {
		tag := sf.Tag.Get("secret")
		if tag != secretHeld && tag != secretNamed {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		out = append(out, SecretSetting{Key: "notify.channels[]." + name, Env: tag == secretNamed})
	}
	return out
}

// SecretValues returns every credential the configuration holds or names:
// each secret setting's value, and the value of each environment variable
// a secret setting names, as getenv reads it. Empty values are left out.
func (c *Config) SecretValues(getenv func(string) string) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	for _, f := range Fields(c) {
		if f.Secret && f.Value.Kind() == reflect.String {
			add(f.Value.String())
		}
	}
	for _, ch := range c.Notify.Channels {
		held, _ := ch.secretKeys()
		for _, v := range held {
			add(v)
		}
	}
	for _, env := range c.SecretEnvNames() {
		add(getenv(env))
	}
	return out
}
