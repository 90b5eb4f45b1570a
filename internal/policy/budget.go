package policy

import "time"

// BudgetDenial checks a cost that is not a mutation (a back-fill of
// reads, say) against the spend budgets in limits, given their stored
// use: it reports the denial a mutation of that cost would get, before
// anything is spent. Nothing is reserved.
func BudgetDenial(limits []Limit, usage map[string]Usage, cost float64, now time.Time) (Decision, bool) {
	var worst Decision
	denied := false
	for _, l := range limits {
		if l.Dimension != DimBudget || cost <= 0 {
			continue
		}
		u, ok := usage[l.Key]
		used, start := l.window(u.Used, u.WindowStart, ok, now)
		if used+cost <= l.Max+limitEpsilon {
			continue
		}
		d := limitDenial(l, used, cost, start.Add(l.period()))
		if !denied || d.ResetAt.After(worst.ResetAt) {
			worst, denied = d, true
		}
	}
	return worst, denied
}
