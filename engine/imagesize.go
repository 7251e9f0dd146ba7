package engine

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"io"
	"strings"
)

// imageSize reads the width and height an image's header states, from
// its base64 data, for the formats models are sent: PNG, JPEG, GIF and
// WebP. It decodes only as far as the header (a JPEG's may follow
// metadata segments, which it skips); ok is false for anything else. What
// a model spends on an image follows from its size, which its bytes do
// not bound: a few hundred bytes of PNG can state 65535×65535.
func imageSize(data string) (w, h uint64, ok bool) {
	r := bufio.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	head, _ := r.Peek(30)
	switch {
	case len(head) >= 24 && bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")) && string(head[12:16]) == "IHDR":
		return uint64(binary.BigEndian.Uint32(head[16:])), uint64(binary.BigEndian.Uint32(head[20:])), true
	case len(head) >= 10 && (bytes.HasPrefix(head, []byte("GIF87a")) || bytes.HasPrefix(head, []byte("GIF89a"))):
		return uint64(binary.LittleEndian.Uint16(head[6:])), uint64(binary.LittleEndian.Uint16(head[8:])), true
	case len(head) >= 16 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return webpSize(head)
	case bytes.HasPrefix(head, []byte{0xff, 0xd8}):
		_, _ = r.Discard(2)
		return jpegSize(r)
	}
	return 0, 0, false
}

// webpSize reads the canvas size from the first chunk of a WebP file,
// given up to its first 30 bytes: lossy (VP8), lossless (VP8L) or
// extended (VP8X, which states the canvas of every frame).
func webpSize(head []byte) (w, h uint64, ok bool) {
	switch fourcc := string(head[12:16]); {
	case len(head) < 30 && fourcc != "VP8L", len(head) < 25:
		return 0, 0, false
	case fourcc == "VP8 ":
		if !bytes.Equal(head[23:26], []byte{0x9d, 0x01, 0x2a}) {
			return 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint16(head[26:]) & 0x3fff), uint64(binary.LittleEndian.Uint16(head[28:]) & 0x3fff), true
	case fourcc == "VP8L":
		if head[20] != 0x2f {
			return 0, 0, false
		}
		b := binary.LittleEndian.Uint32(head[21:])
		return uint64(b&0x3fff) + 1, uint64(b>>14&0x3fff) + 1, true
	case fourcc == "VP8X":
		return uint64(le24(head[24:])) + 1, uint64(le24(head[27:])) + 1, true
	}
	return 0, 0, false
}

func le24(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 }

// jpegSize reads a JPEG's segments, after its SOI marker, up to the first
// start of frame (SOF0 to SOF15, which are C0 to CF but for DHT, JPG and
// DAC), and returns the size it states. Image data (SOS) or the end before
// a frame is no size.
func jpegSize(r *bufio.Reader) (w, h uint64, ok bool) {
	for {
		marker, err := jpegMarker(r)
		if err != nil {
			return 0, 0, false
		}
		switch {
		case marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7):
			continue // standalone markers carry no length
		case marker == 0xd9 || marker == 0xda:
			return 0, 0, false
		}
		var seg [7]byte
		if _, err := io.ReadFull(r, seg[:2]); err != nil {
			return 0, 0, false
		}
		n := int(binary.BigEndian.Uint16(seg[:2])) - 2
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			if n < 5 {
				return 0, 0, false
			}
			if _, err := io.ReadFull(r, seg[2:]); err != nil {
				return 0, 0, false
			}
			return uint64(binary.BigEndian.Uint16(seg[5:])), uint64(binary.BigEndian.Uint16(seg[3:])), true
		}
		if n < 0 {
			return 0, 0, false
		}
		if _, err := r.Discard(n); err != nil {
			return 0, 0, false
		}
	}
}

// jpegMarker reads the next marker as decoders find it (Go's image/jpeg
// and libjpeg alike): bytes before an 0xFF are extraneous and skipped,
// fill bytes (more 0xFF) too, and 0xFF00 is stuffed data, no marker. Read
// any other way, an upstream could hide the frame decoders show behind a
// decoy stating 1×1.
func jpegMarker(r *bufio.Reader) (byte, error) {
	for {
		if _, err := r.ReadBytes(0xff); err != nil {
			return 0, err
		}
		b, err := r.ReadByte()
		for err == nil && b == 0xff {
			b, err = r.ReadByte()
		}
		if err != nil {
			return 0, err
		}
		if b != 0x00 {
			return b, nil
		}
	}
}
