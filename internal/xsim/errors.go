package xsim

import (
	"fmt"
	"net/http"
	"strings"
)

// Problem type URIs. The resource-level ones are the values X's OpenAPI
// document lists; "about:blank" is what X sends for transport-level failures
// (401, 429, generic 403) that the document does not model.
const (
	problemBase         = "https://api.x.com/2/problems/"
	typeInvalidRequest  = problemBase + "invalid-request"
	typeNotFound        = problemBase + "resource-not-found"
	typeNotAuthorized   = problemBase + "not-authorized-for-resource"
	typeInternalError   = problemBase + "internal-error"
	typeClientForbidden = "https://api.x.com/2/problems/client-forbidden"
	typeBlank           = "about:blank"
)

// Details of the 403 bodies clients classify on. They are the sentences X
// uses for the same conditions.
const (
	DetailDuplicate = "You are not allowed to create a Tweet with duplicate content."
	DetailSuspended = "Your account is suspended and is not permitted to access this feature."
	DetailTooLong   = "Your Tweet text is too long. For more information on how X determines text length see https://github.com/twitter/twitter-text."
)

// reply is a handler's answer before it is encoded.
type reply struct {
	status  int
	body    any
	problem bool // Content-Type application/problem+json
	header  http.Header
}

func ok(body any) reply { return reply{status: http.StatusOK, body: body} }

func blankProblem(status int, title, detail string) reply {
	return reply{status: status, problem: true, body: map[string]any{
		"title":  title,
		"detail": detail,
		"type":   typeBlank,
		"status": status,
	}}
}

func errUnauthorized() reply {
	return blankProblem(http.StatusUnauthorized, "Unauthorized", "Unauthorized")
}

func errTooManyRequests() reply {
	return blankProblem(http.StatusTooManyRequests, "Too Many Requests", "Too Many Requests")
}

func errForbidden(detail string) reply {
	return blankProblem(http.StatusForbidden, "Forbidden", detail)
}

func errMissingScopes(missing []string) reply {
	return errForbidden(fmt.Sprintf("Forbidden: the access token is missing the required scope(s): %s. Re-authorize the app with the required scopes (insufficient scope).", strings.Join(missing, ", ")))
}

func errDuplicate() reply { return errForbidden(DetailDuplicate) }

func errSuspended() reply { return errForbidden(DetailSuspended) }

func errClientNotEnrolled(clientID string) reply {
	return reply{status: http.StatusForbidden, problem: true, body: map[string]any{
		"client_id":           clientID,
		"detail":              "When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from a Twitter developer App that is attached to a Project. You can create a project via the developer portal.",
		"registration_url":    "https://developer.twitter.com/en/docs/projects/overview",
		"title":               "Client Forbidden",
		"required_enrollment": "Appropriate Level of API Access",
		"reason":              "client-not-enrolled",
		"type":                typeClientForbidden,
		"status":              http.StatusForbidden,
	}}
}

func errRouteNotFound() reply {
	return blankProblem(http.StatusNotFound, "Not Found", "Sorry, that page does not exist.")
}

func errInternal(status int) reply {
	title := http.StatusText(status)
	if title == "" {
		title = "Server Error"
	}
	return reply{status: status, problem: true, body: map[string]any{
		"title":  title,
		"detail": "Something went wrong. Please try again later.",
		"type":   typeInternalError,
		"status": status,
	}}
}

// paramError is one entry of X's invalid-request errors list.
type paramError struct {
	param   string
	value   string
	message string
}

// errInvalid answers X's 400 invalid-request body for one or more bad
// parameters.
func errInvalid(errs ...paramError) reply {
	list := make([]map[string]any, 0, len(errs))
	for _, e := range errs {
		item := map[string]any{"message": e.message}
		if e.param != "" {
			item["parameters"] = map[string][]string{e.param: {e.value}}
		}
		list = append(list, item)
	}
	body := map[string]any{
		"errors": list,
		"title":  "Invalid Request",
		"detail": "One or more parameters to your request was invalid.",
		"type":   typeInvalidRequest,
		"status": http.StatusBadRequest,
	}
	if len(errs) == 1 && errs[0].param != "" {
		body["parameter"] = errs[0].param
		body["value"] = errs[0].value
	}
	return reply{status: http.StatusBadRequest, problem: true, body: body}
}

func errInvalidParam(param, value, message string) reply {
	return errInvalid(paramError{param: param, value: value, message: message})
}

// errNotFound answers 404 for a write that refers to a resource that does not
// exist.
func errNotFound(resourceType, param, id string) reply {
	return reply{status: http.StatusNotFound, problem: true, body: map[string]any{
		"title":         "Not Found Error",
		"detail":        fmt.Sprintf("Could not find %s with %s: [%s].", resourceType, param, id),
		"type":          typeNotFound,
		"status":        http.StatusNotFound,
		"resource_type": resourceType,
		"resource_id":   id,
		"parameter":     param,
		"value":         id,
	}}
}

// notFoundItem is the partial error X puts in "errors" when a lookup names an
// id that does not exist; the HTTP status stays 200.
func notFoundItem(resourceType, param, id string) map[string]any {
	return map[string]any{
		"value":         id,
		"detail":        fmt.Sprintf("Could not find %s with %s: [%s].", resourceType, param, id),
		"title":         "Not Found Error",
		"resource_type": resourceType,
		"parameter":     param,
		"resource_id":   id,
		"type":          typeNotFound,
	}
}

// errNotYours answers 403 when a path user id is not the authenticated user.
func errNotYours(param, value string) reply {
	return errForbidden(fmt.Sprintf("You are not permitted to perform this action: the `%s` path parameter value [%s] must be the same as the authenticating user.", param, value))
}
