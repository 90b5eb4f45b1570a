package actions

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/envelope"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// ListCreateParams are the arguments and stored parameters of
// x_list_create.
type ListCreateParams struct {
	Name        string `json:"name" jsonschema:"the List's name, 1 to 25 characters"`
	Description string `json:"description,omitempty" jsonschema:"what the List is about, at most 100 characters"`
	Private     bool   `json:"private,omitempty" jsonschema:"true keeps the List visible to you alone"`
}

// Limits declares the arguments' limits.
func (ListCreateParams) Limits() argcheck.Limits {
	return argcheck.Limits{"name": {MaxLength: xapi.MaxListName}, "description": {MaxLength: xapi.MaxListDescription}}
}

func (p ListCreateParams) check() error {
	if err := argcheck.Check(reflect.ValueOf(p), p.Limits()); err != nil {
		return err
	}
	return xapi.NewList{Name: p.Name, Description: p.Description, Private: p.Private}.Check()
}

// ListIDParams are the arguments and stored parameters of x_list_delete.
type ListIDParams struct {
	ListID string `json:"list_id" jsonschema:"the List's id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (ListIDParams) Limits() argcheck.Limits { return argcheck.Limits{"list_id": {ID: true}} }

// ListMemberParams are the arguments and stored parameters of
// x_list_add_member and x_list_remove_member.
type ListMemberParams struct {
	ListID string `json:"list_id" jsonschema:"the List's id (a decimal string); it must be one of yours"`
	UserID string `json:"user_id" jsonschema:"the member's user id (a decimal string)"`
}

// Limits declares the arguments' limits.
func (ListMemberParams) Limits() argcheck.Limits {
	return argcheck.Limits{"list_id": {ID: true}, "user_id": {ID: true}}
}

func (p ListMemberParams) check() error {
	if err := CheckID("list_id", p.ListID); err != nil {
		return err
	}
	return CheckID("user_id", p.UserID)
}

// CreatedList is x_list_create's data.
type CreatedList struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Private     bool   `json:"private"`
}

// DeletedList is x_list_delete's data.
type DeletedList struct {
	Deleted bool   `json:"deleted"`
	ListID  string `json:"list_id"`
}

// ListMembership is the data of x_list_add_member and
// x_list_remove_member: is_member is false after a removal.
type ListMembership struct {
	IsMember bool   `json:"is_member"`
	ListID   string `json:"list_id"`
	UserID   string `json:"user_id"`
}

// listMutations are the List tools. Adding and removing a member undo each
// other and are idempotent on X; creating a List is undone by deleting it;
// deleting one is a delete, so it always needs approval.
func listMutations() []Mutation {
	return []Mutation{
		define[ListCreateParams, CreatedList](Mutation{Name: "x_list_create", Title: "Create list", Category: policy.CatWrite,
			Description: "Create a List of yours on X, public unless private is true."},
			func(in ListCreateParams, _ Env) (any, error) { return in, in.check() }, listCreateAction),
		define[ListIDParams, DeletedList](Mutation{Name: "x_list_delete", Title: "Delete list", Category: policy.CatDelete,
			Destructive: true, Idempotent: true,
			Irreversible: "Deleting a List is permanent: its members and followers are not kept.",
			Description:  "Delete one of your Lists. Deletes always need human approval."},
			same[ListIDParams], listDeleteAction),
		define[ListMemberParams, ListMembership](Mutation{Name: "x_list_add_member", Title: "Add list member", Category: policy.CatEngage,
			Idempotent:  true,
			Description: "Add a user to one of your Lists; they may be told. Adding a member twice changes nothing."},
			same[ListMemberParams], listMemberAction),
		define[ListMemberParams, ListMembership](Mutation{Name: "x_list_remove_member", Title: "Remove list member", Category: policy.CatEngage,
			Destructive: true, Idempotent: true,
			Description: "Remove a user from one of your Lists."},
			same[ListMemberParams], listMemberAction),
	}
}

// parseAs decodes stored parameters and checks them.
func parseAs[P any](params json.RawMessage, check func(P) error) (P, error) {
	var p P
	if err := decode(params, &p); err != nil {
		return p, err
	}
	return p, check(p)
}

// listAction is the shape every List action shares: decode and check,
// get the client, run do.
func listAction[P any](d Deps, m Mutation, check func(P) error,
	do func(ctx context.Context, x *xapi.Client, p P) (any, *envelope.Rollback, xapi.CallInfo, error)) *gateway.Action {
	return &gateway.Action{
		Validate: func(params json.RawMessage) error { _, err := parseAs(params, check); return err },
		Cost:     func(json.RawMessage) float64 { return costOf(m) },
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parseAs(params, check)
			if err != nil {
				return gateway.Result{}, err
			}
			x, err := client(d)
			if err != nil {
				return gateway.Result{}, err
			}
			data, undo, info, err := do(ctx, x, p)
			if err != nil {
				return gateway.Result{RetryCount: info.RetryCount}, err
			}
			return gateway.Result{Data: data, Rollback: undo, RetryCount: info.RetryCount}, nil
		},
	}
}

func listCreateAction(d Deps, m Mutation) *gateway.Action {
	return listAction(d, m, ListCreateParams.check,
		func(ctx context.Context, x *xapi.Client, p ListCreateParams) (any, *envelope.Rollback, xapi.CallInfo, error) {
			l, info, err := x.CreateList(ctx, xapi.NewList{Name: p.Name, Description: p.Description, Private: p.Private})
			if err != nil {
				return nil, nil, info, err
			}
			return CreatedList{ID: l.ID, Name: l.Name, Description: p.Description, Private: p.Private}, undoOf(m, l.ID), info, nil
		})
}

func listDeleteAction(d Deps, m Mutation) *gateway.Action {
	check := func(p ListIDParams) error { return CheckID("list_id", p.ListID) }
	return listAction(d, m, check,
		func(ctx context.Context, x *xapi.Client, p ListIDParams) (any, *envelope.Rollback, xapi.CallInfo, error) {
			ok, info, err := x.DeleteList(ctx, p.ListID)
			return DeletedList{Deleted: ok, ListID: p.ListID}, irreversible(m.Irreversible), info, err
		})
}

func listMemberAction(d Deps, m Mutation) *gateway.Action {
	do := (*xapi.Client).AddListMember
	if m.Name == "x_list_remove_member" {
		do = (*xapi.Client).RemoveListMember
	}
	return listAction(d, m, ListMemberParams.check,
		func(ctx context.Context, x *xapi.Client, p ListMemberParams) (any, *envelope.Rollback, xapi.CallInfo, error) {
			in, info, err := do(x, ctx, p.ListID, p.UserID)
			return ListMembership{IsMember: in, ListID: p.ListID, UserID: p.UserID}, listMemberUndo(m, p), info, err
		})
}

// listMemberUndo is the inverse the endpoint table gives a membership
// change, on the same List: its row names the member, the List goes with
// it.
func listMemberUndo(m Mutation, p ListMemberParams) *envelope.Rollback {
	rb := undoOf(m, p.UserID)
	if rb.Reversible {
		rb.UndoParams["list_id"] = p.ListID
	}
	return rb
}
