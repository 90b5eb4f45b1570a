package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/tuitbot/tuitbot/internal/queue"
	"io/fs"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/tuitbot/tuitbot/internal/redact"
)

// Source says where the configuration came from, for `config show`.
type Source struct {
	File       string   // "" when no file was read
	EnvApplied []string // env variable names that overrode a key
}

// LoadOptions controls Load. Getenv and Environ default to the process
// environment; tests inject their own.
type LoadOptions struct {
	// Path is the -c value; when set the file must exist.
	Path    string
	Getenv  func(string) string
	Environ func() []string
}

// Load builds the effective configuration: defaults, then the file, then
// TUITBOT_* overrides, then validation.
func Load(opts LoadOptions) (*Config, Source, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	cfg := Default()
	var src Source
	home, err := HomeDir(opts.Getenv)
	if err != nil {
		return nil, src, err
	}
	cfg.Home = home

	path, explicit := opts.Path, opts.Path != ""
	if !explicit {
		path = filepath.Join(home, "config.toml")
	}
	cfg.ConfigPath = path
	if err := decodeFile(path, &cfg); err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			// No file is a supported setup: defaults plus env.
		} else {
			return nil, src, err
		}
	} else {
		src.File = path
	}
	applied, err := applyEnv(&cfg, opts.Environ())
	if err != nil {
		return nil, src, err
	}
	src.EnvApplied = applied
	// A list equal to the default (as `config init` writes it out) is still
	// the default: it must not turn blocking a tool into a conflict.
	if cfg.MCPPolicy.RequireApprovalForSet && slices.Equal(cfg.MCPPolicy.RequireApprovalFor, Default().MCPPolicy.RequireApprovalFor) {
		cfg.MCPPolicy.RequireApprovalForSet = false
	}
	cfg.applyChannelDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, src, err
	}
	return &cfg, src, nil
}

func decodeFile(path string, cfg *Config) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("config file %s does not exist (run `tuitbot config init` to create one): %w", path, err)
		}
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if st.IsDir() {
		return fmt.Errorf("config file %s is a directory; pass a TOML file with -c", path)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	md, err := toml.Decode(string(blankComments(doc)), cfg)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if md.IsDefined("mcp_policy", "require_approval_for") {
		cfg.MCPPolicy.RequireApprovalForSet = true
	}
	if und := md.Undecoded(); len(und) > 0 {
		var es Errors
		var reported []string
		for _, k := range und {
			key := k.String()
			// [accounts.NAME] sections are decoded as plain tables and
			// checked key by key when they are applied (ForAccount).
			if k[0] == "accounts" {
				continue
			}
			// Keys inside an unknown table repeat the table's own error.
			if slices.ContainsFunc(reported, func(p string) bool { return strings.HasPrefix(key, p+".") }) {
				continue
			}
			reported = append(reported, key)
			es = append(es, &FieldError{Key: key, Message: "unknown key; " + allowedHint(k)})
		}
		if len(es) > 0 {
			return es
		}
	}
	return nil
}

// blankComments returns doc with every line that holds only a comment
// emptied, its line ending kept, so that an error names the line it did.
// The decoder's lexer hands each comment to its parser as an item of its
// own: in the file `config init` writes, most lines are comments, and they
// were half of what decoding it cost each start. A document with a
// multi-line string, where a line starting with # may be text, is left as
// it is; so is a comment line the decoder refuses (a control character,
// invalid UTF-8), so that it still does.
func blankComments(doc []byte) []byte {
	if bytes.Contains(doc, []byte(`"""`)) || bytes.Contains(doc, []byte("'''")) {
		return doc
	}
	out := make([]byte, 0, len(doc))
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line = doc[:i+1]
		}
		doc = doc[len(line):]
		body, _ := bytes.CutSuffix(line, []byte("\n"))
		body, _ = bytes.CutSuffix(body, []byte("\r"))
		text := bytes.TrimLeft(body, " \t")
		if len(text) == 0 || text[0] != '#' || !plainComment(text) {
			out = append(out, line...)
			continue
		}
		out = append(out, line[len(body):]...)
	}
	return out
}

// plainComment reports whether a comment holds only what TOML allows in
// one: valid UTF-8 without control characters other than tab.
func plainComment(c []byte) bool {
	if !utf8.Valid(c) {
		return false
	}
	for _, b := range c {
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

// allowedHint lists the keys that are valid where an unknown key appeared,
// following the key's path through the Config struct (so a typo inside
// [[mcp_policy.rules]] lists the rule keys, not the section's).
func allowedHint(k toml.Key) string {
	t := reflect.TypeOf(Config{})
	for _, part := range k[:len(k)-1] {
		sf, ok := fieldByTag(t, part)
		if !ok {
			break
		}
		ft := sf.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() != reflect.Struct {
			break
		}
		t = ft
	}
	var keys, secs []string
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		if t == reflect.TypeOf(Config{}) && (sf.Type.Kind() == reflect.Struct || sf.Type.Kind() == reflect.Map) {
			secs = append(secs, "["+tag+"]")
			continue
		}
		keys = append(keys, tag)
	}
	sort.Strings(keys)
	hint := "allowed keys here: " + strings.Join(keys, ", ")
	if len(secs) > 0 {
		hint += "; allowed sections: " + strings.Join(secs, ", ")
	}
	return hint
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if sf := t.Field(i); sf.Tag.Get("toml") == tag {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// Field is one scalar or list key of the configuration.
type Field struct {
	Section string // "" for top-level keys
	Key     string
	// Secret: the key holds a credential (tag secret:"true"); SecretEnv:
	// it names the environment variable that holds one (secret:"env").
	Secret, SecretEnv bool
	Value             reflect.Value
	tag               reflect.StructTag
}

// Doc is the key's documentation. It is read from the struct tag when
// asked for: unquoting every key's text on each walk of the fields (each
// load, each log handler) was most of what a walk cost.
func (f Field) Doc() string { return f.tag.Get("doc") }

// Name is the dotted key name.
func (f Field) Name() string {
	if f.Section == "" {
		return f.Key
	}
	return f.Section + "." + f.Key
}

// EnvName is the override variable for the key.
func (f Field) EnvName() string {
	if f.Section == "" {
		return "TUITBOT_" + strings.ToUpper(f.Key)
	}
	return "TUITBOT_" + strings.ToUpper(f.Section) + "__" + strings.ToUpper(f.Key)
}

// Fields walks the settable keys of cfg in declaration order. Tables of
// tables (policy rules and limits) are file-only and skipped. The layout
// is the type's, found by reflection once per process; a walk (several
// per start: load, secrets, the log handler) only binds it to cfg.
func Fields(cfg *Config) []Field {
	keys := fieldLayout()
	out := make([]Field, len(keys))
	rv := reflect.ValueOf(cfg).Elem()
	for i, k := range keys {
		v := rv.Field(k.outer)
		if k.inner >= 0 {
			v = v.Field(k.inner)
		}
		out[i] = k.Field
		out[i].Value = v
	}
	return out
}

// fieldKey is one settable key of Config: its Field without a value, and
// where the value lies (inner is -1 for a top-level key).
type fieldKey struct {
	Field
	outer, inner int
}

// fieldLayout is Config's settable keys in declaration order. The type
// cannot change while the process runs, so its walk is kept.
var fieldLayout = sync.OnceValue(func() []fieldKey {
	var out []fieldKey
	rt := reflect.TypeFor[Config]()
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		tag := sf.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		if sf.Type.Kind() == reflect.Struct {
			for j := 0; j < sf.Type.NumField(); j++ {
				inner := sf.Type.Field(j)
				itag := inner.Tag.Get("toml")
				if itag == "" || itag == "-" || !scalarOrList(inner.Type) {
					continue
				}
				secret := inner.Tag.Get("secret")
				out = append(out, fieldKey{Field: Field{Section: tag, Key: itag, tag: inner.Tag,
					Secret: secret == secretHeld, SecretEnv: secret == secretNamed}, outer: i, inner: j})
			}
			continue
		}
		if !scalarOrList(sf.Type) {
			// [accounts.NAME] tables are file-only, like policy rules.
			continue
		}
		out = append(out, fieldKey{Field: Field{Key: tag, tag: sf.Tag}, outer: i, inner: -1})
	}
	return out
})

// Sections lists the section names in declaration order.
func Sections() []string {
	var out []string
	rt := reflect.TypeOf(Config{})
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		if tag := sf.Tag.Get("toml"); sf.Type.Kind() == reflect.Struct && tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

func scalarOrList(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	}
	return false
}

// notConfigVars are TUITBOT_ variables that are not config keys.
var notConfigVars = map[string]bool{
	"TUITBOT_HOME": true, "TUITBOT_CONFORMANCE_DIR": true, "TUITBOT_CONFIG": true,
	// What MCP clients read the HTTP bearer token from (see README).
	"TUITBOT_MCP_TOKEN": true,
}

func applyEnv(cfg *Config, environ []string) ([]string, error) {
	// The fields are walked by reflection only when a variable may name
	// one: most starts set none.
	var (
		byName map[string]Field
		fields []Field
	)
	var applied []string
	var es Errors
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "TUITBOT_") || notConfigVars[name] {
			continue
		}
		if byName == nil {
			fields = Fields(cfg)
			byName = make(map[string]Field, len(fields))
			for _, f := range fields {
				byName[f.EnvName()] = f
			}
		}
		f, known := byName[name]
		if !known {
			// Only the section form is unambiguously meant as a config key;
			// other TUITBOT_ names may belong to the environment around us.
			if strings.Contains(name, "__") {
				es = append(es, &FieldError{Key: name, Message: "unknown configuration variable; the form is TUITBOT_<SECTION>__<KEY>, e.g. TUITBOT_LLM__MODEL"})
			} else if want, typo := envTypo(name, fields); typo {
				es = append(es, &FieldError{Key: name, Message: "unknown configuration variable; did you mean " + want + "? (top-level keys are TUITBOT_<KEY>, section keys TUITBOT_<SECTION>__<KEY>)"})
			}
			continue
		}
		if err := setFromString(f.Value, val); err != nil {
			es = append(es, &FieldError{Key: name, Message: err.Error()})
			continue
		}
		applied = append(applied, name)
		if f.Section == "mcp_policy" && f.Key == "require_approval_for" {
			cfg.MCPPolicy.RequireApprovalForSet = true
		}
	}
	if len(es) > 0 {
		return nil, es
	}
	sort.Strings(applied)
	return applied, nil
}

// operatorURL accepts https URLs and plain http to a loopback host. The host
// is parsed, not prefix-matched, so http://127.0.0.1.example.com is refused.
func operatorURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Hostname() == "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		if h == "localhost" {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	return false
}

// httpURLProblem says why s is not an http or https URL with a host, or
// returns "" when it is one or is empty (unset).
func httpURLProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(s))
	switch {
	case err != nil || u.Scheme == "" || u.Opaque != "":
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "is not an http or https URL"
	case u.Hostname() == "":
		return "has no host"
	}
	return ""
}

func setFromString(v reflect.Value, s string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a boolean; allowed values: true, false", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(n)
	case reflect.Slice:
		// An empty value is an explicit empty list, so a default list can be
		// switched off from the environment.
		list := []string{}
		if strings.TrimSpace(s) != "" {
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					list = append(list, p)
				}
			}
		}
		v.Set(reflect.ValueOf(list))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// maxCrossAccountDupH bounds x_api.cross_account_duplicate_hours at 30
// days: the check reads every post of the home's other accounts within
// the window before each post.
const maxCrossAccountDupH = 720

// Validate checks values; every failure names its key and what is allowed.
func (c *Config) Validate() error {
	var es Errors
	add := func(key, format string, args ...any) {
		// A rejected URL is quoted in its message; a key written into it
		// must not be.
		es = append(es, &FieldError{Key: key, Message: redact.URLCredentials(fmt.Sprintf(format, args...))})
	}
	oneOf := func(key, v string, allowed ...string) {
		for _, a := range allowed {
			if v == a {
				return
			}
		}
		add(key, "%q is not allowed; allowed values: %s", v, strings.Join(allowed, ", "))
	}
	positive := func(key string, v int) {
		if v <= 0 {
			add(key, "must be greater than 0 (got %d)", v)
		}
	}
	// NaN passes every range comparison below, so non-finite numbers are
	// refused up front for every float key.
	for _, f := range Fields(c) {
		if f.Value.Kind() == reflect.Float64 {
			if v := f.Value.Float(); math.IsNaN(v) || math.IsInf(v, 0) {
				add(f.Name(), "must be a finite number (got %g)", v)
			}
		}
	}
	for i, r := range c.MCPPolicy.RateLimits {
		if math.IsNaN(r.MaxCount) || math.IsInf(r.MaxCount, 0) {
			add(fmt.Sprintf("mcp_policy.rate_limits[%d].max_count", i), "must be a finite number (got %g)", r.MaxCount)
		}
	}
	oneOf("mode", c.Mode, "autopilot", "composer")
	positive("max_batch_approve", c.MaxBatchApprove)
	positive("x_api.timeout_seconds", c.XAPI.TimeoutSeconds)
	positive("x_api.max_attempts", c.XAPI.MaxAttempts)
	positive("x_api.handoff_window_hours", c.XAPI.HandOffWindowH)
	if h := c.XAPI.CrossAccountDupH; h < 1 || h > maxCrossAccountDupH {
		add("x_api.cross_account_duplicate_hours", "must be between 1 and %d (got %d)", maxCrossAccountDupH, h)
	}
	positive("x_api.handoff_check_seconds", c.XAPI.HandOffCheckS)
	if c.XAPI.MaxBodyBytes <= 0 {
		add("x_api.max_body_bytes", "must be greater than 0")
	}
	if c.XAPI.MaxRateLimitWaitS < 0 {
		add("x_api.max_rate_limit_wait_seconds", "must not be negative")
	}
	switch c.XAPI.MaxPostLength {
	case PostLengthAuto, PostLengthShort, PostLengthLong:
	default:
		add("x_api.max_post_length", "%q is not allowed; allowed values: auto, 280, 25000", string(c.XAPI.MaxPostLength))
	}
	switch c.XAPI.Access {
	case AccessPayPerUse, AccessEnterprise:
	default:
		add("x_api.access", "%q is not allowed; allowed values: pay_per_use, enterprise", string(c.XAPI.Access))
	}
	for key, u := range map[string]string{
		"x_api.api_base_url": c.XAPI.APIBaseURL, "x_api.upload_base_url": c.XAPI.UploadBaseURL,
		"x_api.legacy_upload_base_url": c.XAPI.LegacyUploadURL, "x_api.authorize_url": c.XAPI.AuthorizeURL,
		"x_api.token_url": c.XAPI.TokenURL, "x_api.intent_base_url": c.XAPI.IntentBaseURL,
	} {
		if !operatorURL(u) {
			add(key, "%q must be an https:// URL with a host (plain http is allowed only for 127.0.0.1/localhost)", u)
		}
	}
	if problem := httpURLProblem(c.LLM.BaseURL); problem != "" {
		add("llm.base_url", "%q %s; give an http or https URL such as http://127.0.0.1:11434/v1 (or leave it empty for the provider's own)", c.LLM.BaseURL, problem)
	}
	oneOf("llm.provider", c.LLM.Provider, "", "openai", "anthropic")
	positive("llm.timeout_seconds", c.LLM.TimeoutSeconds)
	positive("llm.max_tokens", c.LLM.MaxTokens)
	if c.LLM.Temperature < 0 || c.LLM.Temperature > 2 {
		add("llm.temperature", "must be between 0 and 2 (got %g)", c.LLM.Temperature)
	}
	if c.Scoring.Threshold < 0 || c.Scoring.Threshold > 100 {
		add("scoring.threshold", "must be between 0 and 100 (got %g)", c.Scoring.Threshold)
	}
	sum := c.Scoring.Keyword + c.Scoring.Follower + c.Scoring.Recency + c.Scoring.Engagement + c.Scoring.ReplyCount + c.Scoring.ContentType
	if sum <= 0 || c.Scoring.Keyword < 0 || c.Scoring.Follower < 0 || c.Scoring.Recency < 0 ||
		c.Scoring.Engagement < 0 || c.Scoring.ReplyCount < 0 || c.Scoring.ContentType < 0 {
		add("scoring", "weights must be non-negative and sum to more than 0")
	}
	positive("limits.max_replies_per_day", c.Limits.MaxRepliesPerDay)
	if c.Limits.MaxDMsPerDay < 0 {
		add("limits.max_dms_per_day", "must not be negative (0 = no direct message may be sent)")
	}
	if c.Limits.MaxReplySuggestionsPerDay < 0 {
		add("limits.max_reply_suggestions_per_day", "must not be negative (0 = no reply is suggested)")
	}
	positive("limits.max_tweets_per_day", c.Limits.MaxTweetsPerDay)
	positive("limits.max_threads_per_week", c.Limits.MaxThreadsPerWeek)
	positive("limits.max_replies_per_author_per_day", c.Limits.MaxRepliesPerAuthorPerDay)
	if c.Limits.ProductMentionRatio < 0 || c.Limits.ProductMentionRatio > 1 {
		add("limits.product_mention_ratio", "must be between 0 and 1")
	}
	if c.Limits.MinActionDelaySeconds < 0 || c.Limits.MinActionDelaySeconds > c.Limits.MaxActionDelaySeconds {
		add("limits.min_action_delay_seconds", "must be between 0 and limits.max_action_delay_seconds")
	}
	positive("storage.audit_retention_days", c.Storage.AuditRetentionDays)
	positive("storage.retention_days", c.Storage.RetentionDays)
	oneOf("mcp.profile", c.MCP.Profile, "workflow", "full", "readonly", "api-readonly")
	oneOf("mcp.dynamic_toolsets", c.MCP.DynamicToolsets, "auto", "on", "off")
	positive("mcp.http_max_connections", c.MCP.HTTPMaxConnections)
	positive("mcp.session_idle_timeout_seconds", c.MCP.SessionIdleTimeoutSeconds)
	positive("mcp.max_sessions", c.MCP.MaxSessions)
	// Below 1 KiB not even an initialize request fits.
	if c.MCP.MaxMessageBytes < 1024 {
		add("mcp.max_message_bytes", "must be at least 1024 (got %d)", c.MCP.MaxMessageBytes)
	}
	for i, n := range c.Media.URLAllowPrivate {
		if _, err := netip.ParsePrefix(strings.TrimSpace(n)); err != nil {
			add(fmt.Sprintf("media.url_allow_private[%d]", i), "%q is not a network in CIDR form (for example 10.1.0.0/16)", n)
		}
	}
	for i, h := range c.Media.URLAllowHosts {
		if bare := strings.TrimPrefix(h, "*."); bare == "" || strings.ContainsAny(bare, "*/:@ ") {
			add(fmt.Sprintf("media.url_allow_hosts[%d]", i), "%q is not a host name or *.domain", h)
		}
	}
	if c.Media.MaxURLBytes <= 0 {
		add("media.max_url_bytes", "must be greater than 0")
	}
	positive("gateway.memory_window_seconds", c.Gateway.MemoryWindowSeconds)
	positive("gateway.db_window_seconds", c.Gateway.DBWindowSeconds)
	positive("gateway.approval_expiry_hours", c.Gateway.ApprovalExpiryHours)
	if c.MCPPolicy.MaxMutationsPerHour < 0 {
		add("mcp_policy.max_mutations_per_hour", "must not be negative (0 = no global hourly cap)")
	}
	positive("mcp_policy.max_pending_approvals", c.MCPPolicy.MaxPendingApprovals)
	if c.MCPPolicy.DailyBudgetUSD < 0 {
		add("mcp_policy.daily_budget_usd", "must not be negative")
	}
	oneOf("mcp_policy.template", c.MCPPolicy.Template, "", "safe_default", "growth_aggressive", "agency_mode")
	if _, err := time.LoadLocation(c.Schedule.Timezone); err != nil || c.Schedule.Timezone == "" {
		add("schedule.timezone", "%q is not an IANA timezone (e.g. UTC, Europe/Berlin)", c.Schedule.Timezone)
	}
	if h := c.Schedule.ActiveHoursStart; h < 0 || h > 23 {
		add("schedule.active_hours_start", "must be an hour 0-23 (got %d)", h)
	}
	// 24 is midnight at the end of the day: 0 to 24 reads as "all day".
	if h := c.Schedule.ActiveHoursEnd; h < 0 || h > 24 {
		add("schedule.active_hours_end", "must be an hour 0-24 (24 is midnight; got %d)", h)
	}
	for _, d := range c.Schedule.ActiveDays {
		oneOf("schedule.active_days", strings.ToLower(d), "mon", "tue", "wed", "thu", "fri", "sat", "sun")
	}
	for _, t := range c.Schedule.PreferredTimes {
		if _, err := time.Parse("15:04", t); err != nil {
			add("schedule.preferred_times", "%q is not an HH:MM time", t)
		}
	}
	if _, err := queue.ParseSlots(c.Queue.Slots); err != nil {
		add("queue.slots", "%v", err)
	}
	positive("evergreen.min_interval_days", c.Evergreen.MinIntervalDays)
	positive("evergreen.max_recycles", c.Evergreen.MaxRecycles)
	oneOf("evergreen.mode", c.Evergreen.Mode, "repost", "requote", "variant")
	for key, v := range map[string]int{"queue.min_gap_minutes": c.Queue.MinGapMinutes, "queue.max_per_day": c.Queue.MaxPerDay, "queue.late_grace_minutes": c.Queue.LateGraceMinutes} {
		if v < 0 {
			add(key, "must not be negative (got %d)", v)
		}
	}
	for key, v := range map[string]int{
		"intervals.mentions_check_seconds": c.Intervals.MentionsSeconds, "intervals.discovery_search_seconds": c.Intervals.DiscoverySeconds,
		"intervals.content_post_window_seconds": c.Intervals.ContentSeconds, "intervals.thread_interval_seconds": c.Intervals.ThreadSeconds,
		"intervals.targets_check_seconds": c.Intervals.TargetsSeconds, "intervals.analytics_seconds": c.Intervals.AnalyticsSeconds,
		"circuit_breaker.error_threshold": c.Breaker.ErrorThreshold, "circuit_breaker.cooldown_seconds": c.Breaker.CooldownSeconds,
	} {
		positive(key, v)
	}
	if c.Intervals.JitterPercent < 0 || c.Intervals.JitterPercent > 100 {
		add("intervals.jitter_percent", "must be between 0 and 100")
	}
	oneOf("logging.level", c.Logging.Level, "debug", "info", "warn", "error")
	if c.Storage.DBPath != "" {
		if st, err := os.Stat(c.DBFile()); err == nil && st.IsDir() {
			add("storage.db_path", "%q is a directory; give a file path", c.Storage.DBPath)
		}
	}
	if u := strings.TrimSpace(c.Storage.DatabaseURL); u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		add("storage.database_url", "must be a postgres:// or postgresql:// URL")
	}
	for i, r := range c.MCPPolicy.Rules {
		key := fmt.Sprintf("mcp_policy.rules[%d]", i)
		if r.ID == "" {
			add(key+".id", "is required")
		}
		oneOf(key+".action.type", r.Action.Type, "allow", "deny", "require_approval", "dry_run")
	}
	c.validateNotify(add)
	c.validateAccounts(add)
	if len(es) > 0 {
		sort.SliceStable(es, func(a, b int) bool { return es[a].Key < es[b].Key })
		return es
	}
	return nil
}
