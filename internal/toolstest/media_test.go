package toolstest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/actions"
	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

func decodeInto(raw []byte, v any) error { return json.Unmarshal(raw, v) }

// testImage is a small picture whose pixels depend on seed, so different
// seeds give different bytes.
func testImage(seed int) *image.Paletted {
	pal := color.Palette{color.Black, color.White, color.RGBA{R: uint8(seed * 37), G: 80, B: 200, A: 255}}
	img := image.NewPaletted(image.Rect(0, 0, 16, 16), pal)
	for i := range img.Pix {
		img.Pix[i] = uint8((i + seed) % 3)
	}
	return img
}

func pngBytes(t *testing.T, seed int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(seed)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T, seed int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(seed), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t *testing.T, seed int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(seed), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// mp4Bytes is an ISO base media file of size bytes: an ftyp box with an mp4
// brand followed by filler, which is all that type sniffing looks at.
func mp4Bytes(size int) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint32(b[0:4], 24)
	copy(b[4:], "ftypmp42\x00\x00\x00\x00mp42isom")
	for i := 24; i < size; i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// webpBytes is a RIFF WEBP header with a VP8 chunk tag.
func webpBytes(seed int) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")
	return append(b, bytes.Repeat([]byte{byte(seed)}, 64)...)
}

// uploadPNG uploads a fresh PNG from the media directory and returns its
// media id.
func uploadPNG(t *testing.T, e *env, name string, seed int) string {
	t.Helper()
	path := writeFile(t, filepath.Join(e.Media, name), pngBytes(t, seed))
	var m actions.MediaResult
	executed(t, e.call("x_upload_media", map[string]any{"file_path": path, "alt_text": "test image " + name}), &m)
	if m.MediaID == "" {
		t.Fatal("upload returned no media id")
	}
	return m.MediaID
}

func (e *env) mediaByID(id string) (xsim.Media, bool) {
	for _, m := range e.Sim.World().Media {
		if m.ID == id {
			return m, true
		}
	}
	return xsim.Media{}, false
}

func TestUploadMedia(t *testing.T) {
	e := newEnv(t, envOptions{permissive: true})

	t.Run("image is a simple upload with alt text sent to X", func(t *testing.T) {
		for i, c := range []struct {
			name string
			data []byte
			mime string
		}{
			{"chart.png", pngBytes(t, 1), "image/png"},
			{"photo.JPG", jpegBytes(t, 2), "image/jpeg"},
			{"sticker.webp", webpBytes(3), "image/webp"},
		} {
			path := writeFile(t, filepath.Join(e.Media, "img", c.name), c.data)
			alt := "Alt text number " + c.name
			before := e.counters()
			var m actions.MediaResult
			r := executed(t, e.call("x_upload_media", map[string]any{"file_path": path, "alt_text": alt}), &m)
			e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1, xsim.CountMediaMetadata: 1})
			if m.UploadStrategy != "simple" || m.Cached || m.MediaType != c.mime || m.SizeBytes != int64(len(c.data)) || m.AltText != alt {
				t.Fatalf("%d: upload data %+v", i, m)
			}
			xm, ok := e.mediaByID(m.MediaID)
			if !ok || xm.AltText != alt || xm.State != "succeeded" {
				t.Fatalf("%d: emulator media %+v (found %t); want alt text %q", i, xm, ok, alt)
			}
			if r.Meta.Rollback.Reversible {
				t.Fatalf("upload rollback %+v claims it can be undone", r.Meta.Rollback)
			}
		}
	})

	t.Run("the same bytes are uploaded once", func(t *testing.T) {
		data := pngBytes(t, 11)
		first := writeFile(t, filepath.Join(e.Media, "once-a.png"), data)
		second := writeFile(t, filepath.Join(e.Media, "sub", "once-b.png"), data)
		before := e.counters()
		var m1, m2 actions.MediaResult
		executed(t, e.call("x_upload_media", map[string]any{"file_path": first}), &m1)
		e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1})
		executed(t, e.call("x_upload_media", map[string]any{"file_path": second}), &m2)
		if !m2.Cached || m2.MediaID != m1.MediaID || m2.UploadStrategy != "cached" || m2.FileHash != m1.FileHash {
			t.Fatalf("second upload of the same bytes: %+v, want the cached %s", m2, m1.MediaID)
		}
		e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1})
		// Changed bytes are a new upload.
		writeFile(t, second, pngBytes(t, 12))
		var m3 actions.MediaResult
		executed(t, e.call("x_upload_media", map[string]any{"file_path": second}), &m3)
		if m3.Cached || m3.MediaID == m1.MediaID {
			t.Fatalf("changed bytes answered from the cache: %+v", m3)
		}
		e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 2})
	})

	t.Run("gif and mp4 are chunked and report progress", func(t *testing.T) {
		for i, c := range []struct {
			name string
			data []byte
			mime string
			min  int // least progress notifications
		}{
			{"loop.gif", gifBytes(t, 21), "image/gif", 2},
			// Over one 4 MiB segment: two appends.
			{"clip.mp4", mp4Bytes(5<<20 + 123), "video/mp4", 3},
		} {
			path := writeFile(t, filepath.Join(e.Media, c.name), c.data)
			e.syncNotifications()
			e.takeProgress()
			before := e.counters()
			p := &mcp.CallToolParams{Name: "x_upload_media", Arguments: map[string]any{"file_path": path, "alt_text": "moving picture"}}
			token := "upload-" + c.name
			p.SetProgressToken(token)
			var m actions.MediaResult
			executed(t, e.callParams(p), &m)
			e.requireDelta(before, map[string]int64{xsim.CountMediaUploaded: 1, xsim.CountMediaMetadata: 1})
			if m.UploadStrategy != "chunked" || m.MediaType != c.mime {
				t.Fatalf("%d: upload data %+v, want chunked %s", i, m, c.mime)
			}
			prog := waitProgress(e, c.min)
			total := float64(len(c.data))
			last := -1.0
			for _, n := range prog {
				if n.ProgressToken != token || n.Total != total || n.Progress < last || n.Progress > total {
					t.Fatalf("%d: progress notification %+v (token %q, total %g)", i, n, token, total)
				}
				last = n.Progress
			}
			if last != total {
				t.Fatalf("%d: last progress %g, want %g", i, last, total)
			}
		}
		// Without a progress token nothing is sent, even for a chunked
		// upload that would report progress.
		path := writeFile(t, filepath.Join(e.Media, "quiet.gif"), gifBytes(t, 22))
		e.syncNotifications()
		e.takeProgress()
		executed(t, e.call("x_upload_media", map[string]any{"file_path": path}), nil)
		e.syncNotifications()
		if got := e.takeProgress(); len(got) != 0 {
			t.Fatalf("%d progress notifications without a progress token", len(got))
		}
	})

	t.Run("paths outside the media directories are blocked", func(t *testing.T) {
		secret := writeFile(t, filepath.Join(e.Home, "fakeuser", ".ssh", "id_rsa"), pngBytes(t, 31))
		outside := writeFile(t, filepath.Join(e.Home, "elsewhere", "pic.png"), pngBytes(t, 32))
		link := filepath.Join(e.Media, "innocent.png")
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
		dirLink := filepath.Join(e.Media, "ssh")
		if err := os.Symlink(filepath.Dir(secret), dirLink); err != nil {
			t.Fatal(err)
		}
		before := e.counters()
		for _, p := range []string{
			secret,
			outside,
			link,
			filepath.Join(dirLink, "id_rsa"),
			filepath.Join(e.Media, "..", "fakeuser", ".ssh", "id_rsa"),
			"~/.ssh/id_rsa",
			"../.ssh/id_rsa",
			"/home/someone/.ssh/id_rsa",
			filepath.Join(e.Home, "fakeuser", ".ssh", "id_ed25519"), // does not exist
		} {
			r := e.call("x_upload_media", map[string]any{"file_path": p}).fails(t, apperr.MediaPathBlocked)
			if strings.Contains(r.Error.Message, e.Home) {
				t.Fatalf("error message reveals the resolved path: %q", r.Error.Message)
			}
		}
		e.requireDelta(before, nil)
		e.call("x_upload_media", map[string]any{"file_path": ""}).fails(t, apperr.InvalidInput).mentions(t, "file_path")
	})

	t.Run("wrong type or content is unsupported", func(t *testing.T) {
		before := e.counters()
		for name, data := range map[string][]byte{
			"notes.txt":    []byte("just text"),
			"archive.zip":  []byte("PK\x03\x04 zip"),
			"noext":        pngBytes(t, 41),
			"fake.png":     []byte("this is not a picture at all"),
			"mislabel.jpg": pngBytes(t, 42),
			"video.gif":    mp4Bytes(4096),
		} {
			path := writeFile(t, filepath.Join(e.Media, "bad", name), data)
			e.call("x_upload_media", map[string]any{"file_path": path}).fails(t, apperr.UnsupportedMedia)
		}
		e.requireDelta(before, nil)
		path := writeFile(t, filepath.Join(e.Media, "alt.png"), pngBytes(t, 43))
		e.call("x_upload_media", map[string]any{"file_path": path, "alt_text": strings.Repeat("é", 1001)}).fails(t, apperr.InvalidInput).mentions(t, "alt_text")
		e.requireDelta(before, nil)
	})
}

// waitProgress returns the progress notifications of the call that just
// returned, which must be at least n.
func waitProgress(e *env, n int) []*mcp.ProgressNotificationParams {
	e.t.Helper()
	e.syncNotifications()
	got := e.takeProgress()
	if len(got) < n {
		e.t.Fatalf("%d progress notifications, want at least %d", len(got), n)
	}
	return got
}
