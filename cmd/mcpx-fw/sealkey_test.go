package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSealKeyFile: seal.key_file, relative to the config file, is the key
// the relay seals with (every replica naming one file shares it), the
// state dir gets no seal.key of its own, and isolated upstreams cannot
// reach the file. A key file others can read is refused naming the config
// key and the file, never the key.
func TestSealKeyFile(t *testing.T) {
	key := []byte("SECRET-0123456789abcdef0123456789")
	for _, tc := range []struct {
		name string
		perm os.FileMode
		want []string // in the error; none: it loads
	}{
		{"private", 0o600, nil},
		{"readable by others", 0o644, []string{"seal.key_file", "keys/shared.key", "chmod 600"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanConfigEnv(t)
			path := writeConfigFile(t, "state_dir: state\nseal:\n  key_file: keys/shared.key\n")
			file := filepath.Join(filepath.Dir(path), "keys", "shared.key")
			if err := os.Mkdir(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, key, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, tc.perm); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Seal.KeyFile != file {
				t.Errorf("seal.key_file = %q, want %q (relative to the config file)", cfg.Seal.KeyFile, file)
			}
			if !slices.Contains(protectedPaths(cfg), file) {
				t.Errorf("protectedPaths %q leave out the seal key file", protectedPaths(cfg))
			}
			rc, err := relayConfig(&runtime{cfg: cfg, isolation: isolationPlan{isolated: map[string]bool{}}})
			if tc.want == nil {
				if err != nil || !bytes.Equal(rc.SealKey, key) {
					t.Fatalf("relay seal key %q, %v; want the file's", rc.SealKey, err)
				}
				if _, err := os.Stat(filepath.Join(cfg.StateDir, "seal.key")); err == nil {
					t.Error("a seal.key was made in the state dir although seal.key_file is set")
				}
				return
			}
			if err == nil {
				t.Fatal("relayConfig took the key file")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
}
