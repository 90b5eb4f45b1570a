package xsim

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

func testPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 6))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testGIF(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, image.NewPaletted(image.Rect(0, 0, 2, 2), color.Palette{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func testMP4(n int) []byte {
	b := make([]byte, n)
	copy(b, "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom")
	return b
}

func (e *env) multipart(path string, fields map[string]string, file []byte) resp {
	e.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if file != nil {
		fw, _ := w.CreateFormFile("media", "f.bin")
		_, _ = fw.Write(file)
	}
	_ = w.Close()
	req, _ := http.NewRequest("POST", e.base+path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+e.token)
	return e.send(req)
}

func TestMediaSimpleUploadAndPost(t *testing.T) {
	e := newEnv(t)
	r := e.multipart("/2/media/upload", map[string]string{"media_category": "tweet_image"}, testPNG(t))
	wantStatus(t, r, 200)
	d := r.data()
	id := d["id"].(string)
	if !strings.HasPrefix(d["media_key"].(string), "3_") || d["image"].(map[string]any)["w"].(float64) != 8 {
		t.Fatalf("upload: %s", r.raw)
	}
	if e.counter(CountMediaUploaded) != 1 {
		t.Fatal("media_uploaded not counted")
	}
	m := e.do("POST", "/2/media/metadata", map[string]any{"id": id, "metadata": map[string]any{"alt_text": map[string]any{"text": "a chart"}}})
	wantStatus(t, m, 200)
	if m.data()["associated_metadata"].(map[string]any)["alt_text"].(map[string]any)["text"] != "a chart" || e.counter(CountMediaMetadata) != 1 {
		t.Fatalf("metadata: %s", m.raw)
	}
	p := e.do("POST", "/2/tweets", map[string]any{"text": "with a picture", "media": map[string]any{"media_ids": []string{id}}})
	wantStatus(t, p, 201)
	g := e.get("/2/tweets/" + p.data()["id"].(string) + "?tweet.fields=attachments&expansions=attachments.media_keys&media.fields=alt_text,width")
	media := g.body["includes"].(map[string]any)["media"].([]any)[0].(map[string]any)
	if media["alt_text"] != "a chart" || media["type"] != "photo" || media["width"].(float64) != 8 {
		t.Fatalf("includes.media = %v", media)
	}
	// JSON with base64 works too.
	j := e.do("POST", "/2/media/upload", map[string]any{"media": base64.StdEncoding.EncodeToString(testPNG(t)), "media_category": "tweet_image"})
	wantStatus(t, j, 200)
	// Another user's token cannot use the media.
	other, _, _ := e.s.IssueToken(e.userID("gopher_gabe"), e.s.AllScopes())
	r2 := e.doTok("POST", "/2/tweets", other, map[string]any{"text": "stolen", "media": map[string]any{"media_ids": []string{id}}})
	wantProblem(t, r2, 400, typeInvalidRequest)
}

func TestMediaSimpleUploadErrors(t *testing.T) {
	e := newEnv(t)
	big := append(testPNG(t), make([]byte, maxImageBytes)...)
	cases := []struct {
		name   string
		fields map[string]string
		file   []byte
	}{
		{"no category", map[string]string{}, testPNG(t)},
		{"no media", map[string]string{"media_category": "tweet_image"}, nil},
		{"bad category", map[string]string{"media_category": "dm_image"}, testPNG(t)},
		{"video needs chunked", map[string]string{"media_category": "tweet_video"}, testMP4(100)},
		{"not an image", map[string]string{"media_category": "tweet_image"}, []byte("hello, plain text")},
		{"gif category needs gif", map[string]string{"media_category": "tweet_gif"}, testPNG(t)},
		{"too big", map[string]string{"media_category": "tweet_image"}, big},
		{"unknown field", map[string]string{"media_category": "tweet_image", "color": "red"}, testPNG(t)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.multipart("/2/media/upload", tc.fields, tc.file), 400, typeInvalidRequest)
		})
	}
	req, _ := http.NewRequest("POST", e.base+"/2/media/upload", strings.NewReader("x"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+e.token)
	wantProblem(t, e.send(req), 400, typeInvalidRequest)
	if e.counter(CountMediaUploaded) != 0 {
		t.Fatal("refused upload counted")
	}
	// A GIF goes through as tweet_gif.
	wantStatus(t, e.multipart("/2/media/upload", map[string]string{"media_category": "tweet_gif"}, testGIF(t)), 200)
}

func TestMediaChunkedVideo(t *testing.T) {
	e := newEnv(t)
	video := testMP4(2500)
	r := e.do("POST", "/2/media/upload/initialize", map[string]any{"media_type": "video/mp4", "total_bytes": len(video), "media_category": "tweet_video"})
	wantStatus(t, r, 200)
	id := r.data()["id"].(string)
	if !strings.HasPrefix(r.data()["media_key"].(string), "7_") {
		t.Fatalf("init: %s", r.raw)
	}
	// Finalize before all bytes arrived is refused.
	wantProblem(t, e.do("POST", "/2/media/upload/"+id+"/finalize", nil), 400, typeInvalidRequest)
	for i := 0; i < 3; i++ {
		chunk := video[i*1000 : min((i+1)*1000, len(video))]
		a := e.multipart("/2/media/upload/"+id+"/append", map[string]string{"segment_index": fmt.Sprint(i)}, chunk)
		wantStatus(t, a, 200)
		if a.data()["expires_at"] == nil {
			t.Fatalf("append: %s", a.raw)
		}
	}
	// Duplicate segment and overflow are refused.
	wantProblem(t, e.multipart("/2/media/upload/"+id+"/append", map[string]string{"segment_index": "0"}, video[:10]), 400, typeInvalidRequest)
	f := e.do("POST", "/2/media/upload/"+id+"/finalize", nil)
	wantStatus(t, f, 200)
	if f.data()["processing_info"].(map[string]any)["state"] != "pending" {
		t.Fatalf("finalize: %s", f.raw)
	}
	if e.counter(CountMediaUploaded) != 1 {
		t.Fatal("media_uploaded after finalize")
	}
	// Not yet usable.
	wantProblem(t, e.do("POST", "/2/tweets", map[string]any{"text": "video", "media": map[string]any{"media_ids": []string{id}}}), 400, typeInvalidRequest)
	states := []string{}
	for i := 0; i < 3; i++ {
		s := e.get("/2/media/upload?command=STATUS&media_id=" + id)
		wantStatus(t, s, 200)
		states = append(states, s.data()["processing_info"].(map[string]any)["state"].(string))
	}
	if strings.Join(states, ",") != "in_progress,succeeded,succeeded" {
		t.Fatalf("states = %v", states)
	}
	wantStatus(t, e.do("POST", "/2/tweets", map[string]any{"text": "video", "media": map[string]any{"media_ids": []string{id}}}), 201)
	// Finalize again is idempotent and not counted twice.
	wantStatus(t, e.do("POST", "/2/media/upload/"+id+"/finalize", nil), 200)
	if e.counter(CountMediaUploaded) != 1 {
		t.Fatal("second finalize counted")
	}
}

func TestMediaChunkedErrors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name string
		body map[string]any
	}{
		{"no type", map[string]any{"total_bytes": 10}},
		{"no size", map[string]any{"media_type": "video/mp4"}},
		{"video too big", map[string]any{"media_type": "video/mp4", "total_bytes": maxVideoBytes + 1}},
		{"gif too big", map[string]any{"media_type": "image/gif", "total_bytes": maxGIFBytes + 1}},
		{"image too big", map[string]any{"media_type": "image/png", "total_bytes": maxImageBytes + 1, "media_category": "tweet_image"}},
		{"type mismatch", map[string]any{"media_type": "image/png", "total_bytes": 10, "media_category": "tweet_video"}},
		{"unsupported type", map[string]any{"media_type": "model/gltf-binary", "total_bytes": 10}},
		{"unknown field", map[string]any{"media_type": "video/mp4", "total_bytes": 10, "x": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.do("POST", "/2/media/upload/initialize", tc.body), 400, typeInvalidRequest)
		})
	}
	wantProblem(t, e.multipart("/2/media/upload/999/append", map[string]string{"segment_index": "0"}, []byte("x")), 404, typeNotFound)
	wantProblem(t, e.do("POST", "/2/media/upload/999/finalize", nil), 404, typeNotFound)
	wantProblem(t, e.get("/2/media/upload?command=STATUS&media_id=999"), 404, typeNotFound)
	wantProblem(t, e.get("/2/media/upload?command=INIT&media_id=1"), 400, typeInvalidRequest)
	wantProblem(t, e.do("POST", "/2/media/metadata", map[string]any{"id": "999", "metadata": map[string]any{"alt_text": map[string]any{"text": "x"}}}), 404, typeNotFound)

	// Declared type must match the bytes.
	r := e.do("POST", "/2/media/upload/initialize", map[string]any{"media_type": "video/mp4", "total_bytes": 20})
	id := r.data()["id"].(string)
	wantProblem(t, e.multipart("/2/media/upload/"+id+"/append", map[string]string{"segment_index": "x"}, []byte("x")), 400, typeInvalidRequest)
	wantProblem(t, e.multipart("/2/media/upload/"+id+"/append", map[string]string{"segment_index": "0"}, make([]byte, 21)), 400, typeInvalidRequest)
	wantStatus(t, e.multipart("/2/media/upload/"+id+"/append", map[string]string{"segment_index": "0"}, testPNG(t)[:20]), 200)
	wantProblem(t, e.do("POST", "/2/media/upload/"+id+"/finalize", nil), 400, typeInvalidRequest)
	// Someone else's upload is invisible.
	r = e.do("POST", "/2/media/upload/initialize", map[string]any{"media_type": "image/png", "total_bytes": 20})
	mine := r.data()["id"].(string)
	other, _, _ := e.s.IssueToken(e.userID("gopher_gabe"), e.s.AllScopes())
	wantProblem(t, e.doTok("POST", "/2/media/upload/"+mine+"/finalize", other, nil), 404, typeNotFound)
	// Alt text limits.
	up := e.multipart("/2/media/upload", map[string]string{"media_category": "tweet_image"}, testPNG(t))
	pid := up.data()["id"].(string)
	for _, body := range []map[string]any{
		{"id": pid, "metadata": map[string]any{"alt_text": map[string]any{"text": strings.Repeat("a", 1001)}}},
		{"id": pid, "metadata": map[string]any{"alt_text": map[string]any{}}},
		{"id": pid, "metadata": map[string]any{}},
		{"id": pid, "metadata": map[string]any{"colour": 1}},
		{"metadata": map[string]any{"alt_text": map[string]any{"text": "x"}}},
	} {
		wantProblem(t, e.do("POST", "/2/media/metadata", body), 400, typeInvalidRequest)
	}
	if e.counter(CountMediaMetadata) != 0 {
		t.Fatal("refused metadata counted")
	}
}

func TestMediaExpires(t *testing.T) {
	e := newEnv(t)
	up := e.multipart("/2/media/upload", map[string]string{"media_category": "tweet_image"}, testPNG(t))
	id := up.data()["id"].(string)
	e.clock.Advance(mediaTTL)
	e.token, _, _ = e.s.IssueToken("", e.s.AllScopes())
	wantProblem(t, e.do("POST", "/2/tweets", map[string]any{"text": "late", "media": map[string]any{"media_ids": []string{id}}}), 400, typeInvalidRequest)
}
