package xapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// X's media limits.
const (
	MaxImageBytes   = 5 << 20
	MaxGIFBytes     = 15 << 20
	MaxVideoBytes   = 512 << 20
	MaxAltTextRunes = 1000
	// DefaultChunkSize is the APPEND segment size; X accepts at most 1000
	// segments, so larger files get proportionally larger segments.
	DefaultChunkSize = 4 << 20
	MaxChunkSize     = 5 << 20
	maxSegments      = 1000
	// DefaultProcessingTimeout bounds the wait for X to process a video.
	DefaultProcessingTimeout = 5 * time.Minute
	defaultCheckAfter        = 2 * time.Second
	maxCheckAfter            = 30 * time.Second
)

// UploadParams describe one media upload. Give the bytes either as Bytes or
// as Data plus Size.
type UploadParams struct {
	Bytes []byte
	Data  io.ReaderAt
	Size  int64
	// MediaType is image/jpeg, image/png, image/webp, image/gif or video/mp4.
	MediaType string
	// Category defaults from MediaType (tweet_image, tweet_gif, tweet_video).
	Category string
	// AltText, when set, is attached with POST /2/media/metadata.
	AltText string
	// Progress is called with bytes sent so far and the total.
	Progress func(done, total int64)
	// ChunkSize overrides DefaultChunkSize for chunked uploads.
	ChunkSize int64
	// ProcessingTimeout overrides DefaultProcessingTimeout.
	ProcessingTimeout time.Duration
}

// Media is an uploaded media object, ready to attach to a post.
type Media struct {
	ID               string `json:"id"`
	MediaKey         string `json:"media_key,omitempty"`
	Size             int64  `json:"size,omitempty"`
	ExpiresAfterSecs int64  `json:"expires_after_secs,omitempty"`
	// ProcessingState is X's final processing state ("succeeded"), or ""
	// when X did not need to process the file.
	ProcessingState string `json:"processing_state,omitempty"`
	AltText         string `json:"alt_text,omitempty"`
	Chunked         bool   `json:"chunked"`
}

type mediaKind int

const (
	kindImage mediaKind = iota + 1
	kindGIF
	kindVideo
)

func mediaKindOf(mediaType string) (mediaKind, bool) {
	switch mediaType {
	case "image/jpeg", "image/png", "image/webp":
		return kindImage, true
	case "image/gif":
		return kindGIF, true
	case "video/mp4":
		return kindVideo, true
	}
	return 0, false
}

type processingInfo struct {
	State          string `json:"state"`
	CheckAfterSecs int64  `json:"check_after_secs"`
	ProgressPct    int    `json:"progress_percent"`
	Error          *struct {
		Code    int    `json:"code"`
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type mediaData struct {
	ID               string          `json:"id"`
	MediaKey         string          `json:"media_key"`
	Size             int64           `json:"size"`
	ExpiresAfterSecs int64           `json:"expires_after_secs"`
	ProcessingInfo   *processingInfo `json:"processing_info"`
}

// validate checks p and returns the media kind, category and chunk size.
func (p *UploadParams) validate() (mediaKind, string, int64, error) {
	p.MediaType = strings.ToLower(strings.TrimSpace(p.MediaType))
	kind, ok := mediaKindOf(p.MediaType)
	if !ok {
		return 0, "", 0, apperr.New(apperr.UnsupportedMedia, "media_type: %q is not supported (image/jpeg, image/png, image/webp, image/gif, video/mp4)", truncate(p.MediaType, 60))
	}
	if p.Bytes != nil && p.Data != nil {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "data: give either Bytes or Data, not both")
	}
	if p.Bytes != nil {
		if p.Size != 0 && p.Size != int64(len(p.Bytes)) {
			return 0, "", 0, apperr.New(apperr.InvalidInput, "size: %d does not match the %d bytes given", p.Size, len(p.Bytes))
		}
		p.Size = int64(len(p.Bytes))
	} else if p.Data == nil {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "data: no media bytes given")
	}
	if p.Size <= 0 {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "size: must be positive")
	}
	limit, defCat := int64(MaxImageBytes), "tweet_image"
	switch kind {
	case kindGIF:
		limit, defCat = MaxGIFBytes, "tweet_gif"
	case kindVideo:
		limit, defCat = MaxVideoBytes, "tweet_video"
	}
	if p.Size > limit {
		return 0, "", 0, apperr.New(apperr.MediaUploadError, "size: %d bytes exceeds X's %d-byte limit for %s", p.Size, limit, p.MediaType)
	}
	cat := strings.TrimSpace(p.Category)
	if cat == "" {
		cat = defCat
	}
	allowed := map[mediaKind][]string{
		kindImage: {"tweet_image", "dm_image"},
		kindGIF:   {"tweet_gif", "dm_gif"},
		kindVideo: {"tweet_video", "dm_video", "amplify_video"},
	}[kind]
	okCat := false
	for _, a := range allowed {
		okCat = okCat || a == cat
	}
	if !okCat {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "category: %q does not fit %s (use one of %s)", truncate(cat, 40), p.MediaType, strings.Join(allowed, ", "))
	}
	if n := utf8.RuneCountInString(p.AltText); n > MaxAltTextRunes {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "alt_text: %d characters, X accepts at most %d", n, MaxAltTextRunes)
	}
	chunk := p.ChunkSize
	if chunk == 0 {
		chunk = DefaultChunkSize
	}
	if chunk < 0 || chunk > MaxChunkSize {
		return 0, "", 0, apperr.New(apperr.InvalidInput, "chunk_size: must be between 1 and %d bytes", MaxChunkSize)
	}
	if need := (p.Size + maxSegments - 1) / maxSegments; chunk < need {
		chunk = need
	}
	return kind, cat, chunk, nil
}

func (p *UploadParams) read(off, n int64) ([]byte, error) {
	if p.Bytes != nil {
		return p.Bytes[off : off+n], nil
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(p.Data, off, n), buf); err != nil {
		return nil, apperr.Wrap(apperr.FileReadError, err, "media: reading bytes %d-%d failed", off, off+n)
	}
	return buf, nil
}

func (p *UploadParams) progress(done int64) {
	if p.Progress != nil {
		p.Progress(done, p.Size)
	}
}

// callSum accumulates the wire facts of a multi-request operation.
type callSum struct{ info CallInfo }

func (s *callSum) add(ci CallInfo) {
	s.info.RetryCount += ci.RetryCount
	if ci.RateLimit != nil {
		s.info.RateLimit = ci.RateLimit
	}
}

// UploadMedia uploads an image with X's simple upload, or a GIF or video
// with INIT/APPEND/FINALIZE (waiting for processing), then sets the alt
// text. The returned Media.ID goes into PostParams.MediaIDs.
func (c *Client) UploadMedia(ctx context.Context, p UploadParams) (*Media, CallInfo, error) {
	kind, cat, chunk, err := p.validate()
	if err != nil {
		return nil, CallInfo{}, err
	}
	var sum callSum
	p.progress(0)
	var m *Media
	if kind == kindImage {
		m, err = c.simpleUpload(ctx, &p, cat, &sum)
	} else {
		m, err = c.chunkedUpload(ctx, &p, cat, chunk, &sum)
	}
	if err != nil {
		return nil, sum.info, err
	}
	if p.AltText != "" {
		if err := c.setAltText(ctx, m.ID, p.AltText, &sum); err != nil {
			return m, sum.info, err
		}
		m.AltText = p.AltText
	}
	return m, sum.info, nil
}

func (c *Client) simpleUpload(ctx context.Context, p *UploadParams, cat string, sum *callSum) (*Media, error) {
	data, err := p.read(0, p.Size)
	if err != nil {
		return nil, err
	}
	// The part is sent as octet-stream: X identifies the file from its bytes
	// and the category, and its spec describes the part as binary.
	body, ctype, err := multipartBody([][2]string{{"media_category", cat}}, "application/octet-stream", data)
	if err != nil {
		return nil, err
	}
	d, err := c.mediaCall(ctx, "POST", "/2/media/upload", nil, body, ctype, sum)
	if err != nil {
		return nil, err
	}
	p.progress(p.Size)
	m := mediaFrom(d)
	if d.ProcessingInfo != nil && d.ProcessingInfo.State != "" && d.ProcessingInfo.State != "succeeded" {
		st, err := c.awaitProcessing(ctx, p, d.ID, d.ProcessingInfo, sum)
		if err != nil {
			return nil, err
		}
		m.ProcessingState = st
	}
	return m, nil
}

func (c *Client) chunkedUpload(ctx context.Context, p *UploadParams, cat string, chunk int64, sum *callSum) (*Media, error) {
	init, _ := json.Marshal(map[string]any{
		"media_type":     p.MediaType,
		"total_bytes":    p.Size,
		"media_category": cat,
	})
	d, err := c.mediaCall(ctx, "POST", "/2/media/upload/initialize", nil, init, "application/json", sum)
	if err != nil {
		return nil, err
	}
	id := d.ID
	for seg, off := 0, int64(0); off < p.Size; seg, off = seg+1, off+chunk {
		n := min(chunk, p.Size-off)
		data, err := p.read(off, n)
		if err != nil {
			return nil, err
		}
		body, ctype, err := multipartBody([][2]string{{"segment_index", strconv.Itoa(seg)}}, "application/octet-stream", data)
		if err != nil {
			return nil, err
		}
		if _, err := c.mediaCallRaw(ctx, "POST", "/2/media/upload/"+id+"/append", nil, body, ctype, sum); err != nil {
			return nil, err
		}
		p.progress(off + n)
	}
	fd, err := c.mediaCall(ctx, "POST", "/2/media/upload/"+id+"/finalize", nil, nil, "", sum)
	if err != nil {
		return nil, err
	}
	m := mediaFrom(fd)
	m.Chunked = true
	if m.ID == "" {
		m.ID = id
	}
	if pi := fd.ProcessingInfo; pi != nil && pi.State != "" && pi.State != "succeeded" {
		st, err := c.awaitProcessing(ctx, p, id, pi, sum)
		if err != nil {
			return nil, err
		}
		m.ProcessingState = st
	} else if pi != nil {
		m.ProcessingState = pi.State
	}
	return m, nil
}

// awaitProcessing polls STATUS until X reports succeeded or failed.
func (c *Client) awaitProcessing(ctx context.Context, p *UploadParams, id string, pi *processingInfo, sum *callSum) (string, error) {
	limit := p.ProcessingTimeout
	if limit <= 0 {
		limit = DefaultProcessingTimeout
	}
	var waited time.Duration
	for {
		switch pi.State {
		case "succeeded":
			return pi.State, nil
		case "failed":
			msg := "X could not process the media"
			if pi.Error != nil && pi.Error.Message != "" {
				msg += ": " + truncate(cleanText(pi.Error.Message), maxXMessage)
			}
			return "", apperr.New(apperr.MediaUploadError, "%s", msg).With("media_id", id)
		case "pending", "in_progress":
		default:
			return "", apperr.New(apperr.MediaUploadError, "X reported an unknown processing state %q", truncate(cleanText(pi.State), 40)).With("media_id", id)
		}
		wait := time.Duration(pi.CheckAfterSecs) * time.Second
		if wait <= 0 {
			wait = defaultCheckAfter
		}
		wait = min(wait, maxCheckAfter)
		if waited+wait > limit {
			return "", apperr.New(apperr.MediaUploadError, "X was still processing the media after %s", limit).With("media_id", id)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return "", apperr.Wrap(apperr.MediaUploadError, err, "stopped waiting for X to process the media").With("media_id", id)
		}
		waited += wait
		q := url.Values{"command": {"STATUS"}, "media_id": {id}}
		d, err := c.mediaCall(ctx, "GET", "/2/media/upload", q, nil, "", sum)
		if err != nil {
			return "", err
		}
		if d.ProcessingInfo == nil {
			return "succeeded", nil
		}
		pi = d.ProcessingInfo
	}
}

// SetAltText attaches alt text to uploaded media (POST /2/media/metadata).
func (c *Client) SetAltText(ctx context.Context, mediaID, text string) (CallInfo, error) {
	var sum callSum
	err := c.setAltText(ctx, mediaID, text, &sum)
	return sum.info, err
}

func (c *Client) setAltText(ctx context.Context, mediaID, text string, sum *callSum) error {
	if err := checkID("media_id", mediaID); err != nil {
		return err
	}
	if text == "" {
		return apperr.New(apperr.InvalidInput, "alt_text: must not be empty")
	}
	if n := utf8.RuneCountInString(text); n > MaxAltTextRunes {
		return apperr.New(apperr.InvalidInput, "alt_text: %d characters, X accepts at most %d", n, MaxAltTextRunes)
	}
	body, _ := json.Marshal(map[string]any{
		"id":       mediaID,
		"metadata": map[string]any{"alt_text": map[string]string{"text": text}},
	})
	_, err := c.mediaCallRaw(ctx, "POST", "/2/media/metadata", nil, body, "application/json", sum)
	return err
}

// mediaCall runs a media request and decodes data, whose id must be an X
// media id (it is used in later paths).
func (c *Client) mediaCall(ctx context.Context, method, path string, q url.Values, body []byte, ctype string, sum *callSum) (*mediaData, error) {
	raw, err := c.mediaCallRaw(ctx, method, path, q, body, ctype, sum)
	if err != nil {
		return nil, err
	}
	var env struct {
		Data   *mediaData `json:"data"`
		Errors []Problem  `json:"errors"`
	}
	r := newRequest(method, HostAPI, path, q, body)
	if err := json.Unmarshal(raw, &env); err != nil || env.Data == nil {
		if env.Data == nil && len(env.Errors) > 0 {
			return nil, classifyProblems(env.Errors)
		}
		code := apperr.MediaUploadError
		if r.class == classCreate {
			code = apperr.XOutcomeUnknown
		}
		return nil, apperr.New(code, "X's answer to %s had no media data", r.endpoint)
	}
	if !isXID(env.Data.ID) {
		return nil, apperr.New(apperr.MediaUploadError, "X's answer to %s carried no valid media id", r.endpoint)
	}
	return env.Data, nil
}

func (c *Client) mediaCallRaw(ctx context.Context, method, path string, q url.Values, body []byte, ctype string, sum *callSum) ([]byte, error) {
	r := newRequest(method, HostAPI, path, q, body)
	r.ctype = ctype
	res, err := c.exec(ctx, r)
	if err != nil {
		return nil, err
	}
	sum.add(res.callInfo())
	return res.body, nil
}

func mediaFrom(d *mediaData) *Media {
	m := &Media{ID: d.ID, MediaKey: d.MediaKey, Size: d.Size, ExpiresAfterSecs: d.ExpiresAfterSecs}
	if d.ProcessingInfo != nil {
		m.ProcessingState = d.ProcessingInfo.State
	}
	return m
}

// multipartBody builds a form with the given fields and a "media" file part.
func multipartBody(fields [][2]string, partType string, data []byte) ([]byte, string, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + 512)
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", fmt.Errorf("media form: %w", err)
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="media"; filename="media"`)
	h.Set("Content-Type", partType)
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", fmt.Errorf("media form: %w", err)
	}
	if _, err := part.Write(data); err != nil {
		return nil, "", fmt.Errorf("media form: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("media form: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
