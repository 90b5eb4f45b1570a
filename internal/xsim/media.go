package xsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // register decoders for DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// X's media limits.
const (
	maxImageBytes   = 5 << 20
	maxGIFBytes     = 15 << 20
	maxVideoBytes   = 512 << 20
	maxSegmentBytes = 5 << 20
	mediaTTL        = 24 * time.Hour
	maxAltText      = 1000
	sniffLen        = 512
)

// categoryLimit returns the byte limit and accepted media types of a
// category the emulator supports.
func categoryLimit(category string) (int64, []string, bool) {
	switch category {
	case "tweet_image":
		return maxImageBytes, []string{"image/jpeg", "image/png", "image/webp", "image/gif"}, true
	case "tweet_gif":
		return maxGIFBytes, []string{"image/gif"}, true
	case "tweet_video", "amplify_video":
		return maxVideoBytes, []string{"video/mp4", "video/quicktime", "video/webm"}, true
	}
	return 0, nil, false
}

func mediaKeyPrefix(category string) string {
	switch category {
	case "tweet_video", "amplify_video":
		return "7_"
	case "tweet_gif":
		return "16_"
	}
	return "3_"
}

// sniff identifies the type of uploaded bytes from their first bytes.
func sniff(head []byte) string {
	ct := http.DetectContentType(head)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if ct == "application/octet-stream" && len(head) >= 12 && string(head[4:8]) == "ftyp" {
		if string(head[8:10]) == "qt" {
			return "video/quicktime"
		}
		return "video/mp4"
	}
	return ct
}

type multipartForm struct {
	values map[string][]byte
}

// parseUpload reads a multipart/form-data or JSON (base64 media) upload body
// into named values, refusing names outside allowed.
func (c *call) parseUpload(allowed []string) (multipartForm, *reply) {
	f := multipartForm{values: map[string][]byte{}}
	ct, params, err := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if err != nil {
		rep := errInvalidParam("Content-Type", c.r.Header.Get("Content-Type"), "The request Content-Type must be multipart/form-data or application/json.")
		return f, &rep
	}
	switch ct {
	case "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(c.body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rep := errInvalidParam("body", "", "The multipart body is malformed: "+err.Error())
				return f, &rep
			}
			name := p.FormName()
			if !slices.Contains(allowed, name) {
				rep := errInvalidParam(name, "", fmt.Sprintf("The form field `%s` is not allowed; expected one of [%s]", name, strings.Join(allowed, ",")))
				return f, &rep
			}
			b, err := io.ReadAll(p)
			if err != nil {
				rep := errInvalidParam(name, "", "The multipart body is malformed: "+err.Error())
				return f, &rep
			}
			f.values[name] = b
		}
	case "application/json":
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(c.body, &raw); err != nil {
			rep := errInvalidParam("body", "", "The request body is not valid JSON: "+err.Error())
			return f, &rep
		}
		for name, v := range raw {
			if !slices.Contains(allowed, name) {
				rep := errInvalidParam(name, "", fmt.Sprintf("The field `%s` is not allowed; expected one of [%s]", name, strings.Join(allowed, ",")))
				return f, &rep
			}
			var s string
			if err := json.Unmarshal(v, &s); err == nil {
				if name == "media" {
					b, err := base64.StdEncoding.DecodeString(s)
					if err != nil {
						rep := errInvalidParam("media", "", "The `media` field must be base64 in JSON bodies.")
						return f, &rep
					}
					f.values[name] = b
					continue
				}
				f.values[name] = []byte(s)
				continue
			}
			f.values[name] = []byte(strings.TrimSpace(string(v)))
		}
	default:
		rep := errInvalidParam("Content-Type", ct, "The request Content-Type must be multipart/form-data or application/json.")
		return f, &rep
	}
	return f, nil
}

func (s *Server) newMedia(c *call, category, mediaType string, total int64) *Media {
	id := s.st.nextID(c.now)
	m := &Media{ID: id, Key: mediaKeyPrefix(category) + id, OwnerID: c.user.ID, Category: category,
		MediaType: mediaType, TotalBytes: total, CreatedAt: c.now.UTC(), ExpiresAt: c.now.Add(mediaTTL).UTC(), State: "uploading"}
	s.st.media[id] = m
	s.st.touch(touchedMedia, id)
	return m
}

func imageSize(b []byte) (int, int) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0
	}
	return cfg.Width, cfg.Height
}

// mediaData renders an upload's state in the spec's Media*ResponseData shape.
func mediaData(m *Media, now time.Time) map[string]any {
	d := map[string]any{
		"id":                 m.ID,
		"media_key":          m.Key,
		"size":               m.TotalBytes,
		"expires_after_secs": max(0, int64(m.ExpiresAt.Sub(now)/time.Second)),
	}
	if strings.HasPrefix(m.MediaType, "image/") && m.Category == "tweet_image" {
		img := map[string]any{"image_type": m.MediaType}
		if m.Width > 0 {
			img["w"], img["h"] = m.Width, m.Height
		}
		d["image"] = img
	}
	if strings.HasPrefix(m.MediaType, "video/") && m.State == "succeeded" {
		d["video"] = map[string]any{"video_type": m.MediaType}
	}
	switch m.State {
	case "pending":
		d["processing_info"] = map[string]any{"state": "pending", "check_after_secs": 1}
	case "in_progress":
		d["processing_info"] = map[string]any{"state": "in_progress", "check_after_secs": 1, "progress_percent": 50}
	case "succeeded":
		if m.Category != "tweet_image" {
			d["processing_info"] = map[string]any{"state": "succeeded", "progress_percent": 100}
		}
	}
	return d
}

// handleMediaUpload is the one-shot POST /2/media/upload for images and
// GIFs; videos must use the chunked flow.
func (s *Server) handleMediaUpload(c *call) reply {
	f, bad := c.parseUpload([]string{"media", "media_category", "additional_owners", "media_type", "shared"})
	if bad != nil {
		return *bad
	}
	category := string(f.values["media_category"])
	data, hasMedia := f.values["media"]
	if category == "" {
		return errInvalidParam("media_category", "", "The `media_category` field is required.")
	}
	if !hasMedia || len(data) == 0 {
		return errInvalidParam("media", "", "The `media` field is required.")
	}
	limit, types, okCat := categoryLimit(category)
	if !okCat {
		return errInvalidParam("media_category", category, fmt.Sprintf("The `media_category` value [%s] is not supported; use tweet_image, tweet_gif or tweet_video.", category))
	}
	if category == "tweet_video" || category == "amplify_video" {
		return errInvalidParam("media_category", category, "Videos must be uploaded with the chunked flow (initialize, append, finalize).")
	}
	if int64(len(data)) > limit {
		return errInvalidParam("media", strconv.Itoa(len(data)), fmt.Sprintf("The media is %d bytes; the limit for %s is %d bytes.", len(data), category, limit))
	}
	typ := sniff(data[:min(len(data), sniffLen)])
	if !slices.Contains(types, typ) {
		return errInvalidParam("media", typ, fmt.Sprintf("The media type %s is not accepted for %s; accepted: %s.", typ, category, strings.Join(types, ", ")))
	}
	m := s.newMedia(c, category, typ, int64(len(data)))
	m.Received = m.TotalBytes
	m.Width, m.Height = imageSize(data)
	m.State = "succeeded"
	s.count(CountMediaUploaded)
	return ok(map[string]any{"data": mediaData(m, c.now)})
}

type initRequest struct {
	MediaType        string   `json:"media_type"`
	TotalBytes       *int64   `json:"total_bytes"`
	MediaCategory    string   `json:"media_category"`
	AdditionalOwners []string `json:"additional_owners"`
	Shared           *bool    `json:"shared"`
}

// handleMediaInit is POST /2/media/upload/initialize.
func (s *Server) handleMediaInit(c *call) reply {
	var req initRequest
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if req.MediaType == "" {
		return errInvalidParam("media_type", "", "The `media_type` field is required.")
	}
	if req.TotalBytes == nil || *req.TotalBytes <= 0 {
		return errInvalidParam("total_bytes", "", "The `total_bytes` field is required and must be positive.")
	}
	category := req.MediaCategory
	if category == "" {
		switch {
		case strings.HasPrefix(req.MediaType, "video/"):
			category = "tweet_video"
		case req.MediaType == "image/gif":
			category = "tweet_gif"
		default:
			category = "tweet_image"
		}
	}
	limit, types, okCat := categoryLimit(category)
	if !okCat {
		return errInvalidParam("media_category", category, fmt.Sprintf("The `media_category` value [%s] is not supported; use tweet_image, tweet_gif or tweet_video.", category))
	}
	if !slices.Contains(types, req.MediaType) {
		return errInvalidParam("media_type", req.MediaType, fmt.Sprintf("The media type %s is not accepted for %s; accepted: %s.", req.MediaType, category, strings.Join(types, ", ")))
	}
	if *req.TotalBytes > limit {
		return errInvalidParam("total_bytes", strconv.FormatInt(*req.TotalBytes, 10), fmt.Sprintf("The media is %d bytes; the limit for %s is %d bytes.", *req.TotalBytes, category, limit))
	}
	m := s.newMedia(c, category, req.MediaType, *req.TotalBytes)
	return ok(map[string]any{"data": map[string]any{"id": m.ID, "media_key": m.Key, "expires_after_secs": int64(mediaTTL / time.Second)}})
}

// ownedUpload finds media {id} of the caller.
func (s *Server) ownedUpload(c *call, id, param string) (*Media, *reply) {
	if bad := idParam(param, id); bad != nil {
		return nil, bad
	}
	m := s.st.media[id]
	if m == nil || m.OwnerID != c.user.ID || !c.now.Before(m.ExpiresAt) {
		rep := errNotFound("media", param, id)
		return nil, &rep
	}
	// Every change to an upload comes through here.
	s.st.touch(touchedMedia, id)
	return m, nil
}

// handleMediaAppend is POST /2/media/upload/{id}/append.
func (s *Server) handleMediaAppend(c *call) reply {
	m, bad := s.ownedUpload(c, c.r.PathValue("id"), "id")
	if bad != nil {
		return *bad
	}
	if m.State != "uploading" {
		return errInvalidParam("id", m.ID, "The upload is already finalized.")
	}
	f, bad := c.parseUpload([]string{"media", "segment_index"})
	if bad != nil {
		return *bad
	}
	rawIdx := strings.TrimSpace(string(f.values["segment_index"]))
	idx, err := strconv.Atoi(rawIdx)
	if err != nil || idx < 0 || idx > 999 {
		return errInvalidParam("segment_index", rawIdx, "The `segment_index` field is required and must be between 0 and 999.")
	}
	data := f.values["media"]
	if len(data) == 0 {
		return errInvalidParam("media", "", "The `media` field is required.")
	}
	if len(data) > maxSegmentBytes {
		return errInvalidParam("media", strconv.Itoa(len(data)), fmt.Sprintf("A segment may be at most %d bytes.", maxSegmentBytes))
	}
	if slices.Contains(m.Segments, idx) {
		return errInvalidParam("segment_index", rawIdx, "This segment_index was already uploaded.")
	}
	if m.Received+int64(len(data)) > m.TotalBytes {
		return errInvalidParam("media", strconv.Itoa(len(data)), fmt.Sprintf("The segments exceed the declared total_bytes (%d).", m.TotalBytes))
	}
	if idx == 0 {
		m.Head = slices.Clone(data[:min(len(data), sniffLen)])
		if m.Category == "tweet_image" {
			m.Width, m.Height = imageSize(data)
		}
	}
	m.Segments = append(m.Segments, idx)
	m.Received += int64(len(data))
	return ok(map[string]any{"data": map[string]any{"expires_at": m.ExpiresAt.Unix()}})
}

// handleMediaFinalize is POST /2/media/upload/{id}/finalize. Images are ready
// at once; GIFs and videos go through processing (pending, in_progress,
// succeeded) advanced by STATUS polls.
func (s *Server) handleMediaFinalize(c *call) reply {
	m, bad := s.ownedUpload(c, c.r.PathValue("id"), "id")
	if bad != nil {
		return *bad
	}
	if m.State != "uploading" {
		return ok(map[string]any{"data": mediaData(m, c.now)})
	}
	if m.Received != m.TotalBytes {
		return errInvalidParam("id", m.ID, fmt.Sprintf("File size mismatch: received %d of %d declared bytes.", m.Received, m.TotalBytes))
	}
	segs := slices.Sorted(slices.Values(m.Segments))
	for i, v := range segs {
		if v != i {
			return errInvalidParam("segment_index", strconv.Itoa(i), fmt.Sprintf("Segment %d is missing.", i))
		}
	}
	if got := sniff(m.Head); got != m.MediaType && got != "application/octet-stream" {
		m.State = "failed"
		return errInvalidParam("media_type", m.MediaType, fmt.Sprintf("The uploaded bytes are %s, not the declared %s.", got, m.MediaType))
	}
	if m.Category == "tweet_image" {
		m.State = "succeeded"
	} else {
		m.State = "pending"
	}
	s.count(CountMediaUploaded)
	return ok(map[string]any{"data": mediaData(m, c.now)})
}

// handleMediaStatus is GET /2/media/upload?command=STATUS&media_id=.
func (s *Server) handleMediaStatus(c *call) reply {
	q := c.r.URL.Query()
	if cmd := q.Get("command"); cmd != "" && cmd != "STATUS" {
		return errInvalidParam("command", cmd, "The `command` query parameter must be STATUS.")
	}
	id := q.Get("media_id")
	if id == "" {
		return errInvalidParam("media_id", "", "The `media_id` query parameter is required.")
	}
	m, bad := s.ownedUpload(c, id, "media_id")
	if bad != nil {
		return *bad
	}
	if m.State == "uploading" {
		return errInvalidParam("media_id", id, "The upload has not been finalized.")
	}
	s.changed()
	m.StatusPolls++
	switch m.State {
	case "pending":
		m.State = "in_progress"
	case "in_progress":
		m.State = "succeeded"
	}
	return ok(map[string]any{"data": mediaData(m, c.now)})
}

// handleMediaMetadata is POST /2/media/metadata (alt text).
func (s *Server) handleMediaMetadata(c *call) reply {
	var req struct {
		ID       string                     `json:"id"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if bad := c.jsonBody(&req); bad != nil {
		return *bad
	}
	if req.ID == "" {
		return errInvalidParam("id", "", "The `id` field is required.")
	}
	m, bad := s.ownedUpload(c, req.ID, "id")
	if bad != nil {
		return *bad
	}
	allowed := []string{"allow_download_status", "alt_text", "audience_policy", "content_expiration", "domain_restrictions",
		"found_media_origin", "geo_restrictions", "management_info", "preview_image", "sensitive_media_warning",
		"shared_info", "sticker_info", "upload_source"}
	assoc := map[string]any{}
	for k, v := range req.Metadata {
		if !slices.Contains(allowed, k) {
			return errInvalidParam("metadata."+k, "", fmt.Sprintf("The metadata field `%s` is not one of [%s]", k, strings.Join(allowed, ",")))
		}
		if k != "alt_text" {
			return errInvalidParam("metadata."+k, "", fmt.Sprintf("The metadata field `%s` is not supported by this server; only alt_text is.", k))
		}
		var alt struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(v, &alt); err != nil || alt.Text == nil {
			return errInvalidParam("metadata.alt_text.text", "", "The `metadata.alt_text.text` field is required.")
		}
		if utf8.RuneCountInString(*alt.Text) > maxAltText {
			return errInvalidParam("metadata.alt_text.text", "", fmt.Sprintf("Alt text may be at most %d characters.", maxAltText))
		}
		m.AltText = *alt.Text
		assoc["alt_text"] = map[string]any{"text": m.AltText}
	}
	if len(assoc) == 0 {
		return errInvalidParam("metadata", "", "The `metadata` field must set alt_text.")
	}
	s.count(CountMediaMetadata)
	s.chargeWrite(c, BillMediaMetadata)
	return ok(map[string]any{"data": map[string]any{"id": m.ID, "associated_metadata": assoc}})
}
