package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config"
	"github.com/mcpx-fw/mcpx-fw/cmd/mcpx-fw/internal/config/configtest"
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
			configtest.CleanEnv(t)
			path := configtest.WriteFile(t, "state_dir: state\nseal:\n  key_file: keys/shared.key\n")
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
			cfg, err := config.Load(path)
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

// TestCheckNamesSealKey: check names the shared key by an id that is the
// same for replicas holding one key and differs for another key, so an
// operator can tell why replicas refuse each other's states, and never
// shows the key.
func TestCheckNamesSealKey(t *testing.T) {
	dir := t.TempDir()
	keys := map[string]string{"a": "SECRET-0123456789abcdef0123456789", "b": "SECRET-0123456789abcdef0123456789", "c": "SECRET-another-key-0123456789abcdef"}
	ids := map[string]string{}
	for name, key := range keys {
		file := writeFile(t, filepath.Join(dir, name), "seal.key", key)
		if err := os.Chmod(file, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := writeFile(t, filepath.Join(dir, name), "mcpx-fw.yaml", "state_dir: state\npolicy:\n  dir: "+repoPath(t, "policies")+"\nseal:\n  key_file: seal.key\n")
		res := runCLI(t, "check", "--config", cfg)
		_, line, _ := strings.Cut(res.stdout, "seal key: "+file+" (id ")
		id, _, ok := strings.Cut(line, ";")
		if res.code != 0 || !ok || len(id) != 16 {
			t.Fatalf("check: exit %d, stdout %q, stderr %q; want the key file and its id", res.code, res.stdout, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, "SECRET") {
			t.Errorf("check shows the key: %s%s", res.stdout, res.stderr)
		}
		ids[name] = id
	}
	if ids["a"] != ids["b"] || ids["a"] == ids["c"] {
		t.Errorf("ids %v: want one for one key, another for another", ids)
	}
}
