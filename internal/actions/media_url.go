package actions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/argcheck"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/redact"
	"github.com/tuitbot/tuitbot/internal/safefetch"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// MaxMediaURL bounds a media URL's length.
const MaxMediaURL = 2048

// DefaultMaxURLBytes is the largest video downloaded when Deps sets none.
const DefaultMaxURLBytes = 64 << 20

// UploadURLInput is x_upload_media_from_url's arguments, and its stored
// parameters: the download happens when the gateway executes the call, so
// an approved item fetches what the human saw named.
type UploadURLInput struct {
	URL     string `json:"url" jsonschema:"https URL of a jpg, png, webp, gif or mp4 on a public host"`
	AltText string `json:"alt_text,omitempty" jsonschema:"alt text sent to X (at most 1000 characters)"`
}

// Limits declares the arguments' limits.
func (UploadURLInput) Limits() argcheck.Limits {
	return argcheck.Limits{"url": {MaxLength: MaxMediaURL}, "alt_text": {MaxLength: MaxAltText}}
}

// URLMediaResult is x_upload_media_from_url's data.
type URLMediaResult struct {
	MediaResult
	// SourceURL is where the bytes came from, after redirects, with every
	// query value masked: a signed URL's query is a credential.
	SourceURL string `json:"source_url"`
}

// prepareUploadURL checks what needs no configuration; the gateway action
// checks the URL against media.url_* before anything else.
func prepareUploadURL(in UploadURLInput, _ Env) (any, error) {
	if err := argcheck.Check(reflect.ValueOf(in), in.Limits()); err != nil {
		return nil, err
	}
	in.URL = strings.TrimSpace(in.URL)
	if in.URL == "" {
		return nil, apperr.New(apperr.InvalidInput, "url: required")
	}
	u, err := url.Parse(in.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, apperr.New(apperr.InvalidInput, "url: must be an absolute https URL")
	}
	return in, nil
}

// urlMediaLimit maps a declared type to its download limit: X's image and
// GIF limits, and maxVideo for mp4. An undeclared type may be anything up
// to the largest; the sniffed type's own limit is applied after.
func urlMediaLimit(maxVideo int64) safefetch.Limit {
	return func(declared string) (int64, error) {
		if declared == "" || declared == "application/octet-stream" {
			return max(maxVideo, mediaKinds[".gif"].maxSize), nil
		}
		k, ok := kindByMIME(declared)
		if !ok {
			return 0, apperr.New(apperr.UnsupportedMedia, "url: the server declared %s, not jpg, png, webp, gif or mp4", declared)
		}
		return kindLimit(k, maxVideo), nil
	}
}

func kindByMIME(mime string) (mediaKind, bool) {
	if mime == "image/jpg" {
		mime = "image/jpeg"
	}
	for _, k := range mediaKinds {
		if k.mime == mime {
			return k, true
		}
	}
	return mediaKind{}, false
}

func kindLimit(k mediaKind, maxVideo int64) int64 {
	if k.mime == "video/mp4" {
		return min(maxVideo, k.maxSize)
	}
	return k.maxSize
}

// sniffDownload returns the downloaded bytes' media type, refusing bytes
// that are not media, disagree with the declared type or exceed their
// type's limit.
func sniffDownload(r *safefetch.Response, maxVideo int64) (string, error) {
	if len(r.Body) == 0 {
		return "", apperr.New(apperr.MediaDownloadError, "url: the server sent no bytes")
	}
	got := http.DetectContentType(r.Body[:min(len(r.Body), 512)])
	if strings.HasPrefix(got, "video/") {
		got = "video/mp4"
	}
	k, ok := kindByMIME(got)
	if !ok {
		return "", apperr.New(apperr.UnsupportedMedia, "url: the content is %s, not jpg, png, webp, gif or mp4", got)
	}
	if d := r.Declared; d != "" && d != "application/octet-stream" {
		dk, _ := kindByMIME(d)
		if dk.mime != k.mime {
			return "", apperr.New(apperr.UnsupportedMedia, "url: the server declared %s but the content is %s", d, got)
		}
	}
	if limit := kindLimit(k, maxVideo); int64(len(r.Body)) > limit {
		return "", apperr.New(apperr.MediaTooLarge, "url: %d bytes exceeds the %d-byte limit for %s", len(r.Body), limit, k.mime).
			With("limit_bytes", limit)
	}
	return k.mime, nil
}

func uploadURLAction(d Deps, m Mutation) *gateway.Action {
	maxVideo := d.MaxURLBytes
	if maxVideo <= 0 {
		maxVideo = DefaultMaxURLBytes
	}
	parse := func(params json.RawMessage) (UploadURLInput, error) {
		var p UploadURLInput
		if err := decode(params, &p); err != nil {
			return p, err
		}
		if d.URLFetcher == nil {
			return p, apperr.New(apperr.ConfigError, "url: downloading media is not configured")
		}
		_, err := d.URLFetcher.Policy().CheckURL(p.URL)
		return p, err
	}
	return &gateway.Action{
		Validate: func(params json.RawMessage) error { _, err := parse(params); return err },
		Cost:     func(json.RawMessage) float64 { return xapi.EstimateCost("POST", "/2/media/upload", 1, false) },
		// A signed URL's query is a credential: the audit row keeps where
		// the media came from, never the values that let anyone fetch it.
		Summary: func(params json.RawMessage) any { return maskedUploadURL(params) },
		Request: func(params json.RawMessage) []byte {
			b, err := json.Marshal(maskedUploadURL(params))
			if err != nil {
				return nil
			}
			return b
		},
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			// Until the upload starts nothing has gone to X: a download
			// that times out or is cancelled is a failure, not an unknown
			// outcome.
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, gateway.NotSent(err)
			}
			r, err := d.URLFetcher.Get(ctx, p.URL, urlMediaLimit(maxVideo))
			if err != nil {
				return gateway.Result{}, gateway.NotSent(err)
			}
			mime, err := sniffDownload(r, maxVideo)
			if err != nil {
				return gateway.Result{}, gateway.NotSent(err)
			}
			sum := sha256.Sum256(r.Body)
			res, err := uploadBytes(ctx, d, m, r.Body, hex.EncodeToString(sum[:]), mime, p.AltText, urlFileName(r.URL))
			if mr, ok := res.Data.(MediaResult); ok {
				res.Data = URLMediaResult{MediaResult: mr, SourceURL: redact.URLQuery(r.URL)}
			}
			return res, err
		},
	}
}

// maskedUploadURL is the stored parameters with every query value of the
// URL masked (see redact.URLQuery), for the audit row.
func maskedUploadURL(params json.RawMessage) UploadURLInput {
	var p UploadURLInput
	if decode(params, &p) != nil {
		return UploadURLInput{}
	}
	p.URL = redact.URLQuery(p.URL)
	return p
}

// urlFileName is the last path segment of u, for the upload record.
func urlFileName(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return path.Base(pu.Path)
}
