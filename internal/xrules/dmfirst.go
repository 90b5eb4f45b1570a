package xrules

import "context"

// RuleDMFirst: an automated DM only to a user who sent the account a DM
// first ("DMs only after the user DMs you first"). A person may still
// decide to write first: the rule sends the DM to them, it does not
// refuse it.
const RuleDMFirst = "dm_only_after_user_dms"

// dmFirst sends to a person an automated DM to a user not known to have
// sent the account a DM. Whether they did is what tuitbot already knows
// (the DMs any process of the home read, kept in the database); nothing
// is read from X to find out, so a DM routed here costs nothing, and the
// person who approves it is the one who decides to write first.
func (c Checker) dmFirst(ctx context.Context, call Call) (*ToPerson, error) {
	if call.Effect != "x_send_dm" {
		return nil, nil
	}
	if call.TargetUser == "" {
		// A message to a conversation by its id, or a new group: whom it
		// reaches is not in the request.
		return &ToPerson{Rule: RuleDMFirst,
			Reason: "X's developer guidelines allow an automated DM only to a user who sent the account a DM first, and the recipients of this one cannot be read from the request: a person decides"}, nil
	}
	if c.Automation.DMedFirst != nil {
		ok, err := c.Automation.DMedFirst(ctx, call.TargetUser)
		if err != nil {
			return nil, err
		}
		if ok {
			return nil, nil
		}
	}
	return &ToPerson{Rule: RuleDMFirst,
		Reason: "X's developer guidelines allow an automated DM only to a user who sent the account a DM first, and user " + call.TargetUser +
			" has not, in the DMs tuitbot read (x_get_dm_events, or x_get of the DM events with expansions=sender_id): a person decides"}, nil
}
