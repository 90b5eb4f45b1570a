package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// staticFile is one embedded asset, whole and gzipped.
type staticFile struct {
	body, gz []byte
	ctype    string
}

// staticAssets serves the embedded stylesheet and script, gzipped for
// browsers that take it: they hold no secret, so compressing them gives
// nothing away, and it makes every page lighter. Pages themselves are not
// compressed (they carry the CSRF token beside text others wrote).
type staticAssets map[string]staticFile

func newStaticAssets(fsys fs.FS) (staticAssets, error) {
	out := staticAssets{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = http.DetectContentType(body)
		}
		out[name] = staticFile{body: body, gz: gz.Bytes(), ctype: ctype}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: read the static assets: %w", err)
	}
	return out, nil
}

func (a staticAssets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := a[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Vary", "Accept-Encoding")
	body := f.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip reads an Accept-Encoding header: gzip is listed, and not
// with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		k, v, _ := strings.Cut(strings.TrimSpace(params), "=")
		if strings.TrimSpace(k) != "q" {
			return true
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err == nil && q > 0
	}
	return false
}
