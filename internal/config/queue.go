package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tuitbot/tuitbot/internal/queue"
)

// QueuePolicy is the posting queue these settings describe: [queue] read
// in schedule.timezone. No slots means no queue (Rules is empty).
func (c *Config) QueuePolicy() (queue.Policy, error) {
	loc, err := time.LoadLocation(c.Schedule.Timezone)
	if err != nil {
		return queue.Policy{}, &FieldError{Key: "schedule.timezone", Message: err.Error()}
	}
	rules, err := queue.ParseSlots(c.Queue.Slots)
	if err != nil {
		return queue.Policy{}, &FieldError{Key: "queue.slots", Message: fmt.Sprint(err)}
	}
	return queue.Policy{Rules: rules, Loc: loc, MinGap: time.Duration(c.Queue.MinGapMinutes) * time.Minute, MaxPerDay: c.Queue.MaxPerDay}, nil
}

// TOMLStrings renders a list of strings as a TOML array.
func TOMLStrings(list []string) string {
	out := "["
	for i, s := range list {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(s)
	}
	return out + "]"
}
