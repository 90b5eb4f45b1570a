package actions

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

// MediaValidity is how long X keeps an uploaded media id usable.
const MediaValidity = 24 * time.Hour

// MaxAltText is X's alt-text limit.
const MaxAltText = 1000

type mediaKind struct {
	mime    string
	maxSize int64
}

// mediaKinds maps extensions to X's accepted types and size limits.
var mediaKinds = map[string]mediaKind{
	".jpg":  {"image/jpeg", 5 << 20},
	".jpeg": {"image/jpeg", 5 << 20},
	".png":  {"image/png", 5 << 20},
	".webp": {"image/webp", 5 << 20},
	".gif":  {"image/gif", 15 << 20},
	".mp4":  {"video/mp4", 512 << 20},
}

// UploadParams are x_upload_media's stored parameters. The file's SHA-256 is
// part of them, so a changed file is a different request.
type UploadParams struct {
	FilePath  string `json:"file_path"`
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	AltText   string `json:"alt_text,omitempty"`
}

// MediaResult is x_upload_media's data.
type MediaResult struct {
	MediaID        string `json:"media_id"`
	MediaType      string `json:"media_type"`
	SizeBytes      int64  `json:"file_size_bytes"`
	UploadStrategy string `json:"upload_strategy"`
	Cached         bool   `json:"cached"`
	FileHash       string `json:"file_hash"`
	AltText        string `json:"alt_text,omitempty"`
	ExpiresAt      string `json:"expires_at"`
}

type progressKey struct{}

// WithProgress attaches an upload progress callback to ctx.
func WithProgress(ctx context.Context, f func(done, total int64)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressOf(ctx context.Context) func(done, total int64) {
	f, _ := ctx.Value(progressKey{}).(func(done, total int64))
	return f
}

// ConfinePath resolves path and requires it to be a regular file inside one
// of dirs, after following symlinks, so an agent cannot read ~/.ssh/id_rsa
// through a link or "..".
func ConfinePath(path string, dirs []string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", apperr.New(apperr.InvalidInput, "file_path: required")
	}
	// A relative or ~ path is not inside a media directory either: it is
	// blocked like any other outside path, not merely malformed.
	if !filepath.IsAbs(path) {
		return "", apperr.New(apperr.MediaPathBlocked, "file_path: must be an absolute path inside a configured media directory (media.allowed_dirs)")
	}
	blocked := apperr.New(apperr.MediaPathBlocked, "file_path: %s is outside the media directories; put the file in one of media.allowed_dirs", filepath.Base(path))
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		// Say "cannot read" only for paths that would be inside a media
		// directory; elsewhere the difference would tell an agent which
		// files exist outside them.
		if !within(filepath.Clean(path), dirs) {
			return "", blocked
		}
		return "", apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(path))
	}
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if inside(rd, real) {
			st, err := os.Stat(real)
			if err != nil {
				return "", apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(path))
			}
			if !st.Mode().IsRegular() {
				return "", apperr.New(apperr.FileReadError, "file_path: %s is not a regular file", filepath.Base(path))
			}
			return real, nil
		}
	}
	return "", blocked
}

// inside reports whether path is dir or below it (both cleaned).
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// within reports whether path lies lexically below one of dirs, as written
// or with the directory's symlinks resolved.
func within(path string, dirs []string) bool {
	for _, d := range dirs {
		if inside(filepath.Clean(d), path) {
			return true
		}
		if rd, err := filepath.EvalSymlinks(d); err == nil && inside(rd, path) {
			return true
		}
	}
	return false
}

// PrepareUpload checks a file and computes its stored parameters.
func PrepareUpload(path, alt string, dirs []string) (UploadParams, error) {
	real, err := ConfinePath(path, dirs)
	if err != nil {
		return UploadParams{}, err
	}
	kind, err := kindOf(real)
	if err != nil {
		return UploadParams{}, err
	}
	sum, size, err := hashFile(real)
	if err != nil {
		return UploadParams{}, err
	}
	if size > kind.maxSize {
		return UploadParams{}, apperr.New(apperr.MediaUploadError, "file_path: %d bytes exceeds X's %d-byte limit for %s", size, kind.maxSize, kind.mime)
	}
	if size == 0 {
		return UploadParams{}, apperr.New(apperr.MediaUploadError, "file_path: the file is empty")
	}
	if err := sniff(real, kind); err != nil {
		return UploadParams{}, err
	}
	if len([]rune(alt)) > MaxAltText {
		return UploadParams{}, apperr.New(apperr.InvalidInput, "alt_text: at most %d characters", MaxAltText)
	}
	return UploadParams{FilePath: real, SHA256: sum, MediaType: kind.mime, AltText: alt}, nil
}

func kindOf(path string) (mediaKind, error) {
	k, ok := mediaKinds[strings.ToLower(filepath.Ext(path))]
	if !ok {
		return k, apperr.New(apperr.UnsupportedMedia, "file_path: %q is not jpg, jpeg, png, webp, gif or mp4", filepath.Ext(path))
	}
	return k, nil
}

// sniff rejects a file whose bytes do not match its extension.
func sniff(path string, k mediaKind) error {
	f, err := os.Open(path)
	if err != nil {
		return apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(path))
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	got := http.DetectContentType(head[:n])
	if got != k.mime && !(k.mime == "video/mp4" && strings.HasPrefix(got, "video/")) {
		return apperr.New(apperr.UnsupportedMedia, "file_path: the content is %s, not %s as the extension says", got, k.mime)
	}
	return nil
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(path))
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(path))
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func uploadAction(d Deps, m Mutation) *gateway.Action {
	parse := func(params json.RawMessage) (UploadParams, error) {
		var p UploadParams
		if err := decode(params, &p); err != nil {
			return p, err
		}
		real, err := ConfinePath(p.FilePath, d.MediaDirs)
		if err != nil {
			return p, err
		}
		if real != p.FilePath {
			return p, apperr.New(apperr.MediaPathBlocked, "file_path: the path now resolves elsewhere; upload it again")
		}
		return p, nil
	}
	return &gateway.Action{
		Validate: func(params json.RawMessage) error { _, err := parse(params); return err },
		Cost:     func(json.RawMessage) float64 { return xapi.EstimateCost("POST", "/2/media/upload", 1, false) },
		Execute: func(ctx context.Context, params json.RawMessage) (gateway.Result, error) {
			p, err := parse(params)
			if err != nil {
				return gateway.Result{}, err
			}
			data, err := os.ReadFile(p.FilePath)
			if err != nil {
				return gateway.Result{}, apperr.Wrap(apperr.FileReadError, err, "file_path: cannot read %s", filepath.Base(p.FilePath))
			}
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != p.SHA256 {
				return gateway.Result{}, apperr.New(apperr.ValidationError, "file_path: the file changed since the upload was requested; request it again")
			}
			return uploadBytes(ctx, d, m, data, p.SHA256, p.MediaType, p.AltText, filepath.Base(p.FilePath))
		},
	}
}

// uploadBytes uploads data of mediaType, or returns the still-valid earlier
// upload of the same bytes, and records it.
func uploadBytes(ctx context.Context, d Deps, m Mutation, data []byte, sum, mediaType, alt, name string) (gateway.Result, error) {
	note := irreversible(m.Irreversible)
	if cached, ok := cachedMedia(ctx, d, sum); ok {
		return gateway.Result{Data: cached, Rollback: note}, nil
	}
	x, err := client(d)
	if err != nil {
		return gateway.Result{}, err
	}
	xm, info, err := x.UploadMedia(ctx, xapi.UploadParams{Bytes: data, Size: int64(len(data)), MediaType: mediaType,
		AltText: alt, Progress: progressOf(ctx)})
	if err != nil {
		return gateway.Result{RetryCount: info.RetryCount}, err
	}
	now := d.now()
	res := MediaResult{MediaID: xm.ID, MediaType: mediaType, SizeBytes: int64(len(data)), FileHash: sum,
		AltText: alt, UploadStrategy: "simple", ExpiresAt: store.FormatTime(now.Add(MediaValidity))}
	if xm.Chunked {
		res.UploadStrategy = "chunked"
	}
	if d.DB != nil {
		_, _ = d.DB.ExecContext(ctx, `INSERT INTO media_uploads (account_id, file_hash, file_name, size_bytes, media_type, x_media_id, alt_text, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, accountOf(d), sum, name, len(data), mediaType, xm.ID, alt,
			store.FormatTime(now), res.ExpiresAt)
	}
	return gateway.Result{Data: res, Rollback: note, RetryCount: info.RetryCount}, nil
}

// cachedMedia returns a still-valid earlier upload of the same bytes, so the
// same file is never uploaded twice within its validity.
func cachedMedia(ctx context.Context, d Deps, sum string) (MediaResult, bool) {
	if d.DB == nil {
		return MediaResult{}, false
	}
	var r MediaResult
	err := d.DB.QueryRowContext(ctx, `SELECT x_media_id, media_type, size_bytes, alt_text, expires_at FROM media_uploads
		WHERE account_id = ? AND file_hash = ? AND expires_at > ? ORDER BY id DESC LIMIT 1`,
		accountOf(d), sum, store.FormatTime(d.now().Add(time.Hour))).Scan(&r.MediaID, &r.MediaType, &r.SizeBytes, &r.AltText, &r.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) || err != nil {
		return MediaResult{}, false
	}
	r.Cached, r.FileHash, r.UploadStrategy = true, sum, "cached"
	return r, true
}
