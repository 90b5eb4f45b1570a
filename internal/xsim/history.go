package xsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The demo account's posting history: 200 original posts in the 90 days
// before the recent week, at a few fixed hours, whose engagement follows
// an hour-of-week curve drawn from the seed. It gives the best-time tools
// something to find, and the sandbox a result a user can check.
const (
	historyPosts    = 200
	historyWeeks    = 11 // posts fall 8 to 85 days before now
	historyBaseRate = 0.02
)

// historyHours are the hours (UTC) the demo account posts at.
var historyHours = []int{9, 12, 15, 18}

// BestHour is a bucket of the week: a weekday and an hour in UTC.
type BestHour struct {
	Weekday time.Weekday
	Hour    int
}

// DemoPeak is the bucket of the week in which the demo account's posts of
// the seed's world engage best: the peak of its curve.
func DemoPeak(seed int64) BestHour {
	rng := historyRand(seed)
	return BestHour{Weekday: time.Weekday(rng.IntN(7)), Hour: historyHours[rng.IntN(len(historyHours))]}
}

// historyRand is the history's own generator, so the rest of a seed's
// world is what it was before the history existed.
func historyRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x6265737474696d65))
}

// demoCurve is the engagement multiplier of a bucket: 2.2 at the peak,
// falling with the distance in days (around the week) and in hours.
func demoCurve(peak BestHour, wd time.Weekday, hour int) float64 {
	dd := math.Abs(float64(wd - peak.Weekday))
	dd = math.Min(dd, 7-dd)
	dh := float64(hour-peak.Hour) / 3
	return 1 + 1.2*math.Exp(-dd*dd/2)*math.Exp(-dh*dh)
}

// addHistory seeds the demo account's posting history into st.
func addHistory(st *state, seed int64, demo *User, now time.Time) {
	rng := historyRand(seed)
	peak := BestHour{Weekday: time.Weekday(rng.IntN(7)), Hour: historyHours[rng.IntN(len(historyHours))]}
	topics := demoTopics()
	nouns := demoNouns()
	own := demoAccountTopics()
	buckets := len(historyHours) * 7
	order := rng.Perm(buckets)
	last := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -8)
	for i := range historyPosts {
		b := order[i%buckets]
		wd, hour := time.Weekday(b/len(historyHours)), historyHours[b%len(historyHours)]
		day := last.AddDate(0, 0, -((int(last.Weekday())-int(wd)+7)%7 + 7*rng.IntN(historyWeeks)))
		at := day.Add(time.Duration(hour)*time.Hour + time.Duration(rng.IntN(40))*time.Minute + time.Duration(i)*time.Second)
		tpls := topics[own[rng.IntN(len(own))].key]
		text := strings.ReplaceAll(tpls[rng.IntN(len(tpls))], "{n}", fmt.Sprint(2+rng.IntN(9)))
		text = strings.ReplaceAll(text, "{x}", nouns[rng.IntN(len(nouns))])
		// The history is older than every other post, so its ids are
		// derived from its times alone, below the world's last id.
		id := strconv.FormatInt((at.UnixMilli()-twepoch)<<22+int64(i), 10)
		impressions := int64(600 + rng.IntN(400))
		noise := 0.85 + 0.3*rng.Float64()
		eng := float64(impressions) * historyBaseRate * demoCurve(peak, wd, hour) * noise
		t := &Tweet{ID: id, AuthorID: demo.ID, Text: text, CreatedAt: at, ConversationID: id, Lang: "en", Source: "Twitter Web App",
			LikeBase: int64(eng * 0.6), RetweetBase: int64(eng * 0.15), ReplyBase: int64(eng * 0.1), QuoteBase: int64(eng * 0.05),
			BookmarkBase: int64(eng * 0.1), ImpressionBase: impressions}
		st.addTweet(t)
	}
}
