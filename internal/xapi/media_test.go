package xapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// mediaServer is a small stand-in for X's v2 media endpoints.
type mediaServer struct {
	mu         sync.Mutex
	t          *testing.T
	simple     []byte
	category   string
	init       map[string]any
	segments   map[int][]byte
	states     []string // processing states returned by FINALIZE then each STATUS
	checkAfter int
	altText    map[string]any
	failAppend int
	initStatus int
	badID      bool
}

func (m *mediaServer) nextState() map[string]any {
	if len(m.states) == 0 {
		return nil
	}
	s := m.states[0]
	m.states = m.states[1:]
	return map[string]any{"state": s, "check_after_secs": m.checkAfter}
}

func (m *mediaServer) handle(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	reply := func(status int, v any) {
		b, _ := json.Marshal(v)
		writeJSON(w, status, string(b))
	}
	id := "111"
	if m.badID {
		id = "../../2/tweets"
	}
	switch {
	case r.Method == "POST" && r.URL.Path == "/2/media/upload":
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			reply(400, map[string]any{"title": "Invalid Request", "detail": err.Error()})
			return
		}
		if len(r.MultipartForm.Value) != 1 {
			reply(400, map[string]any{"title": "Invalid Request", "detail": fmt.Sprintf("unexpected fields %v", r.MultipartForm.Value)})
			return
		}
		m.category = r.FormValue("media_category")
		f, _, err := r.FormFile("media")
		if err != nil {
			reply(400, map[string]any{"title": "Invalid Request", "detail": "no media part"})
			return
		}
		m.simple, _ = io.ReadAll(f)
		reply(200, map[string]any{"data": map[string]any{"id": id, "media_key": "3_" + id, "size": len(m.simple)}})
	case r.Method == "POST" && r.URL.Path == "/2/media/upload/initialize":
		if m.initStatus != 0 {
			reply(m.initStatus, map[string]any{"title": "Service Unavailable"})
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			reply(400, map[string]any{"title": "Invalid Request", "detail": "content type"})
			return
		}
		_ = json.NewDecoder(r.Body).Decode(&m.init)
		reply(200, map[string]any{"data": map[string]any{"id": id, "media_key": "7_" + id, "expires_after_secs": 86400}})
	case r.Method == "POST" && r.URL.Path == "/2/media/upload/111/append":
		if m.failAppend > 0 {
			m.failAppend--
			reply(503, map[string]any{"title": "Service Unavailable"})
			return
		}
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			reply(400, map[string]any{"title": "Invalid Request", "detail": err.Error()})
			return
		}
		seg, err := strconv.Atoi(r.FormValue("segment_index"))
		f, _, ferr := r.FormFile("media")
		if err != nil || ferr != nil {
			reply(400, map[string]any{"title": "Invalid Request", "detail": "segment"})
			return
		}
		m.segments[seg], _ = io.ReadAll(f)
		reply(200, map[string]any{"data": map[string]any{"expires_at": 1773200000}})
	case r.Method == "POST" && r.URL.Path == "/2/media/upload/111/finalize":
		total := 0
		for _, s := range m.segments {
			total += len(s)
		}
		d := map[string]any{"id": "111", "media_key": "7_111", "size": total}
		if pi := m.nextState(); pi != nil {
			d["processing_info"] = pi
		}
		reply(200, map[string]any{"data": d})
	case r.Method == "GET" && r.URL.Path == "/2/media/upload":
		if r.URL.Query().Get("command") != "STATUS" || r.URL.Query().Get("media_id") != "111" {
			reply(400, map[string]any{"title": "Invalid Request", "detail": "status query"})
			return
		}
		d := map[string]any{"id": "111", "media_key": "7_111"}
		if pi := m.nextState(); pi != nil {
			d["processing_info"] = pi
		}
		reply(200, map[string]any{"data": d})
	case r.Method == "POST" && r.URL.Path == "/2/media/metadata":
		_ = json.NewDecoder(r.Body).Decode(&m.altText)
		reply(200, map[string]any{"data": map[string]any{"id": "111", "associated_metadata": map[string]any{}}})
	default:
		reply(404, map[string]any{"title": "Not Found Error"})
	}
}

func newMediaHarness(t *testing.T) (*harness, *mediaServer) {
	t.Helper()
	ms := &mediaServer{t: t, segments: map[int][]byte{}}
	return newHarness(t, ms.handle), ms
}

func TestSimpleImageUploadWithAltText(t *testing.T) {
	h, ms := newMediaHarness(t)
	img := bytes.Repeat([]byte{0xff, 0xd8, 0x01}, 1000)
	var progress [][2]int64
	m, _, err := h.c.UploadMedia(context.Background(), UploadParams{
		Bytes: img, MediaType: "image/jpeg", AltText: "a cat on a keyboard",
		Progress: func(done, total int64) { progress = append(progress, [2]int64{done, total}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "111" || m.MediaKey != "3_111" || m.Chunked || m.AltText != "a cat on a keyboard" {
		t.Fatalf("media = %+v", m)
	}
	if !bytes.Equal(ms.simple, img) || ms.category != "tweet_image" {
		t.Fatalf("uploaded %d bytes category %q", len(ms.simple), ms.category)
	}
	want := `{"id":"111","metadata":{"alt_text":{"text":"a cat on a keyboard"}}}`
	if got, _ := json.Marshal(ms.altText); string(got) != want {
		t.Fatalf("metadata body = %s", got)
	}
	if _, err := h.c.SetAltText(context.Background(), m.ID, "a cat, revised"); err != nil {
		t.Fatal(err)
	}
	if ms.altText["metadata"].(map[string]any)["alt_text"].(map[string]any)["text"] != "a cat, revised" {
		t.Fatalf("SetAltText body = %v", ms.altText)
	}
	if len(progress) != 2 || progress[0] != [2]int64{0, 3000} || progress[1] != [2]int64{3000, 3000} {
		t.Fatalf("progress = %v", progress)
	}
	rows := h.usage.all()
	if len(rows) != 3 || rows[0].Endpoint != "POST /2/media/upload" || !near(rows[0].CostUSD, PriceMediaUpload) ||
		rows[1].Endpoint != "POST /2/media/metadata" || !near(rows[1].CostUSD, PriceMediaMetadata) {
		t.Fatalf("ledger = %+v", rows)
	}
}

func TestChunkedVideoUploadWaitsForProcessing(t *testing.T) {
	h, ms := newMediaHarness(t)
	ms.states = []string{"pending", "in_progress", "succeeded"}
	ms.checkAfter = 3
	ms.failAppend = 1
	video := make([]byte, 2500)
	for i := range video {
		video[i] = byte(i)
	}
	var mu sync.Mutex
	var progress []int64
	m, info, err := h.c.UploadMedia(context.Background(), UploadParams{
		Data: bytes.NewReader(video), Size: int64(len(video)), MediaType: "video/mp4", ChunkSize: 1000,
		Progress: func(done, total int64) {
			mu.Lock()
			progress = append(progress, done)
			mu.Unlock()
			if total != 2500 {
				t.Errorf("total = %d", total)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "111" || !m.Chunked || m.ProcessingState != "succeeded" {
		t.Fatalf("media = %+v", m)
	}
	if ms.init["media_type"] != "video/mp4" || ms.init["total_bytes"] != float64(2500) || ms.init["media_category"] != "tweet_video" {
		t.Fatalf("init body = %v", ms.init)
	}
	var got []byte
	for i := 0; i < len(ms.segments); i++ {
		got = append(got, ms.segments[i]...)
	}
	if len(ms.segments) != 3 || !bytes.Equal(got, video) {
		t.Fatalf("segments = %d, reassembled equal = %v", len(ms.segments), bytes.Equal(got, video))
	}
	if fmt.Sprint(progress) != "[0 1000 2000 2500]" {
		t.Fatalf("progress = %v", progress)
	}
	// One backoff for the failed APPEND, then two processing waits.
	sl := h.sleeps.all()
	if len(sl) != 3 || sl[1] != 3*time.Second || sl[2] != 3*time.Second {
		t.Fatalf("sleeps = %v", sl)
	}
	if info.RetryCount != 1 {
		t.Fatalf("retry count = %d, want 1 (the failed append)", info.RetryCount)
	}
	if n := h.hits.get("GET /2/media/upload"); n != 2 {
		t.Fatalf("STATUS polls = %d", n)
	}
}

func TestChunkedGIFDefaults(t *testing.T) {
	h, ms := newMediaHarness(t)
	gif := bytes.Repeat([]byte("GIF89a"), 10)
	m, _, err := h.c.UploadMedia(context.Background(), UploadParams{Bytes: gif, MediaType: "IMAGE/GIF"})
	if err != nil {
		t.Fatal(err)
	}
	if ms.init["media_category"] != "tweet_gif" || len(ms.segments) != 1 || m.ProcessingState != "" {
		t.Fatalf("init = %v segments = %d media = %+v", ms.init, len(ms.segments), m)
	}
}

func TestProcessingFailureAndTimeout(t *testing.T) {
	t.Run("failed", func(t *testing.T) {
		h, ms := newMediaHarness(t)
		ms.states = []string{"pending", "failed"}
		_, _, err := h.c.UploadMedia(context.Background(), UploadParams{Bytes: []byte("vid"), MediaType: "video/mp4"})
		e := wantCode(t, err, apperr.MediaUploadError)
		if e.Extra["media_id"] != "111" {
			t.Fatalf("extra = %v", e.Extra)
		}
	})
	t.Run("still processing", func(t *testing.T) {
		h, ms := newMediaHarness(t)
		for i := 0; i < 50; i++ {
			ms.states = append(ms.states, "in_progress")
		}
		ms.checkAfter = 60 // capped to 30 s per wait
		_, _, err := h.c.UploadMedia(context.Background(), UploadParams{Bytes: []byte("vid"), MediaType: "video/mp4", ProcessingTimeout: 90 * time.Second})
		wantCode(t, err, apperr.MediaUploadError)
		for _, d := range h.sleeps.all() {
			if d != 30*time.Second {
				t.Fatalf("wait %v, want 30s cap", d)
			}
		}
		if len(h.sleeps.all()) != 3 {
			t.Fatalf("waits = %d, want 3 within 90s", len(h.sleeps.all()))
		}
	})
}

func TestMediaInitIsNotRetriedAfterServerError(t *testing.T) {
	h, ms := newMediaHarness(t)
	ms.initStatus = 500
	_, _, err := h.c.UploadMedia(context.Background(), UploadParams{Bytes: []byte("vid"), MediaType: "video/mp4"})
	wantCode(t, err, apperr.XOutcomeUnknown)
	if n := h.hits.get("POST /2/media/upload/initialize"); n != 1 {
		t.Fatalf("INIT hits = %d, want 1", n)
	}
}

func TestMediaIDFromServerIsValidated(t *testing.T) {
	h, ms := newMediaHarness(t)
	ms.badID = true
	_, _, err := h.c.UploadMedia(context.Background(), UploadParams{Bytes: []byte("vid"), MediaType: "video/mp4"})
	wantCode(t, err, apperr.MediaUploadError)
	if n := h.hits.get("POST /2/tweets"); n != 0 {
		t.Fatalf("a hostile media id steered a request")
	}
}

type shortReader struct{}

func (shortReader) ReadAt(p []byte, off int64) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestUploadValidation(t *testing.T) {
	h, _ := newMediaHarness(t)
	ctx := context.Background()
	cases := []struct {
		name  string
		p     UploadParams
		code  apperr.Code
		field string
	}{
		{"type", UploadParams{Bytes: []byte("x"), MediaType: "application/pdf"}, apperr.UnsupportedMedia, "media_type"},
		{"no data", UploadParams{MediaType: "image/png"}, apperr.InvalidInput, "data"},
		{"both", UploadParams{Bytes: []byte("x"), Data: bytes.NewReader(nil), MediaType: "image/png"}, apperr.InvalidInput, "data"},
		{"size mismatch", UploadParams{Bytes: []byte("x"), Size: 5, MediaType: "image/png"}, apperr.InvalidInput, "size"},
		{"image too big", UploadParams{Data: shortReader{}, Size: MaxImageBytes + 1, MediaType: "image/png"}, apperr.MediaUploadError, "size"},
		{"gif too big", UploadParams{Data: shortReader{}, Size: MaxGIFBytes + 1, MediaType: "image/gif"}, apperr.MediaUploadError, "size"},
		{"video too big", UploadParams{Data: shortReader{}, Size: MaxVideoBytes + 1, MediaType: "video/mp4"}, apperr.MediaUploadError, "size"},
		{"category", UploadParams{Bytes: []byte("x"), MediaType: "image/png", Category: "tweet_video"}, apperr.InvalidInput, "category"},
		{"alt text", UploadParams{Bytes: []byte("x"), MediaType: "image/png", AltText: strings.Repeat("é", 1001)}, apperr.InvalidInput, "alt_text"},
		{"chunk", UploadParams{Bytes: []byte("x"), MediaType: "video/mp4", ChunkSize: MaxChunkSize + 1}, apperr.InvalidInput, "chunk_size"},
		{"unreadable", UploadParams{Data: shortReader{}, Size: 10, MediaType: "image/png"}, apperr.FileReadError, "media"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := h.c.UploadMedia(ctx, tc.p)
			e := wantCode(t, err, tc.code)
			if !strings.HasPrefix(e.Message, tc.field) {
				t.Fatalf("message %q does not name %s", e.Message, tc.field)
			}
		})
	}
	if len(h.usage.all()) != 0 {
		t.Fatalf("invalid uploads reached X")
	}
	if _, err := h.c.SetAltText(ctx, "abc", "x"); apperr.CodeOf(err) != apperr.InvalidInput {
		t.Fatalf("SetAltText bad id = %v", err)
	}
}

func TestLargeFilesUseFewerThanAThousandSegments(t *testing.T) {
	p := UploadParams{Data: shortReader{}, Size: 200 << 20, MediaType: "video/mp4", ChunkSize: 64 << 10}
	_, _, chunk, err := p.validate()
	if err != nil {
		t.Fatal(err)
	}
	if segs := (p.Size + chunk - 1) / chunk; segs > maxSegments {
		t.Fatalf("%d segments", segs)
	}
}
