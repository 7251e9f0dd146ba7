package engine

import (
	"bytes"
	"encoding/base64"
	"image"
	_ "image/gif"  // registered for image.DecodeConfig
	_ "image/jpeg" // registered for image.DecodeConfig
	_ "image/png"  // registered for image.DecodeConfig
	"testing"
)

// FuzzImageSize holds the image header reader, which reads an upstream's
// bytes, to Go's own decoders: on any bytes it returns without panicking,
// and wherever a decoder of Go's reads a PNG, JPEG or GIF's size, the
// reader reads the same size, or none (and the image is charged by its
// bytes): a model is charged for the picture a decoder would give it.
func FuzzImageSize(f *testing.F) {
	for _, format := range []string{"png", "jpeg", "gif"} {
		raw, _ := base64.StdEncoding.DecodeString(encodedImage(f, format, 40, 30))
		f.Add(raw)
	}
	raw, _ := base64.StdEncoding.DecodeString(jpegWithExif(f, 300, 64, 48))
	f.Add(raw)
	f.Add(jpegWithDecoy(f, 64, 48, []byte{0x00, 0x12}))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8L\x05\x00\x00\x00\x2f\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, h, ok := imageSize(base64.StdEncoding.EncodeToString(data))
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return
		}
		if !ok || w != uint64(cfg.Width) || h != uint64(cfg.Height) {
			t.Errorf("read %d×%d (ok %v); Go's decoder reads %d×%d", w, h, ok, cfg.Width, cfg.Height)
		}
	})
}
