package actions

import (
	"bytes"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/safefetch"
)

func TestURLMediaLimit(t *testing.T) {
	const video = 64 << 20
	tests := []struct {
		declared string
		want     int64
		code     apperr.Code
	}{
		{"image/png", 5 << 20, ""},
		{"image/jpeg", 5 << 20, ""},
		{"image/jpg", 5 << 20, ""},
		{"image/webp", 5 << 20, ""},
		{"image/gif", 15 << 20, ""},
		{"video/mp4", video, ""},
		{"", video, ""},
		{"application/octet-stream", video, ""},
		{"text/html", 0, apperr.UnsupportedMedia},
		{"image/svg+xml", 0, apperr.UnsupportedMedia},
	}
	for _, tt := range tests {
		got, err := urlMediaLimit(video)(tt.declared)
		if apperr.CodeOf(err) != tt.code || got != tt.want {
			t.Errorf("limit(%q) = %d, %v; want %d, code %q", tt.declared, got, err, tt.want, tt.code)
		}
	}
	if got, _ := urlMediaLimit(1 << 40)("video/mp4"); got != 512<<20 {
		t.Errorf("a video limit above X's 512 MB gives %d, want X's", got)
	}
}

func TestSniffDownload(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	gif := []byte("GIF89a\x01\x00\x01\x00")
	tests := []struct {
		name, declared string
		body           []byte
		want           string
		code           apperr.Code
	}{
		{"png as png", "image/png", png, "image/png", ""},
		{"png undeclared", "", png, "image/png", ""},
		{"png as octet-stream", "application/octet-stream", png, "image/png", ""},
		{"html as png", "image/png", []byte("<!DOCTYPE html><html></html>"), "", apperr.UnsupportedMedia},
		{"gif as png", "image/png", gif, "", apperr.UnsupportedMedia},
		{"text undeclared", "", []byte("hello"), "", apperr.UnsupportedMedia},
		{"empty", "image/png", nil, "", apperr.MediaDownloadError},
		{"undeclared png past the image limit", "", append(png, bytes.Repeat([]byte{0}, 5<<20)...), "", apperr.MediaTooLarge},
		{"undeclared gif within its limit", "", append(gif, bytes.Repeat([]byte{0}, 6<<20)...), "image/gif", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sniffDownload(&safefetch.Response{Declared: tt.declared, Body: tt.body}, 64<<20)
			if apperr.CodeOf(err) != tt.code || got != tt.want {
				t.Errorf("sniff = %q, %v; want %q, code %q", got, err, tt.want, tt.code)
			}
		})
	}
}
