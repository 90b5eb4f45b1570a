package policy

import "fmt"

const (
	hour = 3600
	day  = 86400
)

// template returns the rules and limits of a built-in template. Each call
// builds fresh slices so callers may keep and modify them.
func template(name string) ([]Rule, []Limit, error) {
	src := sourceTemplatePrefix + name
	rule := func(id string, prio int, label string, cond Conditions, act Action) Rule {
		return Rule{ID: src + ":" + id, Priority: prio, Label: label, Enabled: true, Conditions: cond, Action: act, Source: src}
	}
	limit := func(key, dim, match string, max float64, period int64) Limit {
		return Limit{Key: key, Dimension: dim, MatchValue: match, Max: max, PeriodSeconds: period, Source: src}
	}
	deleteApproval := rule("delete_approval", 100, "Deletes need approval",
		Conditions{Categories: []Category{CatDelete}},
		Action{Type: ActionRequireApproval, Reason: "deletes require approval (" + name + ")"})
	allowAll := rule("allow_all", 150, "Everything else runs within the limits",
		Conditions{}, Action{Type: ActionAllow})

	switch name {
	case TemplateSafeDefault:
		return []Rule{
				deleteApproval,
				rule("write_approval", 101, "Posts need approval", Conditions{Categories: []Category{CatWrite}},
					Action{Type: ActionRequireApproval, Reason: "writes require approval (safe_default)"}),
				rule("thread_approval", 102, "Threads need approval", Conditions{Categories: []Category{CatThread}},
					Action{Type: ActionRequireApproval, Reason: "threads require approval (safe_default)"}),
				rule("engage_allow", 103, "Engagement runs within the limits", Conditions{Categories: []Category{CatEngage}},
					Action{Type: ActionAllow}),
			}, []Limit{
				limit("mcp:global:hourly", DimGlobal, "*", 20, hour),
				limit("mcp:category:engage:daily", DimCategory, string(CatEngage), 50, day),
			}, nil
	case TemplateGrowthAggressive:
		return []Rule{deleteApproval, allowAll}, []Limit{
			limit("mcp:global:hourly", DimGlobal, "*", 50, hour),
			limit("mcp:category:engage:daily", DimCategory, string(CatEngage), 100, day),
		}, nil
	case TemplateAgencyMode:
		return []Rule{deleteApproval, allowAll}, []Limit{
			limit("mcp:global:daily", DimGlobal, "*", 200, day),
			limit("mcp:tool:x_post_tweet:daily", DimTool, "x_post_tweet", 30, day),
			limit("mcp:tool:x_like_tweet:daily", DimTool, "x_like_tweet", 50, day),
			limit("mcp:tool:x_follow_user:daily", DimTool, "x_follow_user", 20, day),
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown template %q (want one of %v)", name, Templates())
}
