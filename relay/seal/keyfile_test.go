package seal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretKey is printable so that a test can see it never lands in an error.
var secretKey = []byte("SECRET-seal-key-material-0123456789")

// TestLoadSealKeyFile: a shared key file is read as it is; one that is
// missing, too short, too long, not a file, or reachable by group or
// others (or in a folder they can write) is refused, naming the file and
// never the key.
func TestLoadSealKeyFile(t *testing.T) {
	write := func(key []byte, perm os.FileMode) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, key, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, perm); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  []string // in the error; none: the key loads
	}{
		{"private", write(secretKey, 0o600), nil},
		{"read-only", write(secretKey, 0o400), nil},
		{"missing", func(*testing.T, string) {}, []string{"no such file", "head -c 32 /dev/urandom"}},
		{"short", write(secretKey[:31], 0o600), []string{"31 bytes", "at least 32"}},
		{"empty", write(nil, 0o600), []string{"0 bytes"}},
		{"too long", write(bytes.Repeat(secretKey, 200), 0o600), []string{"more than"}},
		{"readable by group", write(secretKey, 0o640), []string{"group or others", "chmod 600"}},
		{"readable by others", write(secretKey, 0o604), []string{"0604", "chmod 600"}},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"not a regular file"}},
		{"folder writable by others", func(t *testing.T, path string) {
			write(secretKey, 0o600)(t, path)
			if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
		}, []string{"chmod go-w"}},
		// A link is judged by the file it reaches: the folder that can
		// replace the key is the target's, not the link's.
		{"link into a folder writable by others", linkTo(0o777, secretKey, 0o600), []string{"writable by group or others", "chmod go-w"}},
		{"link to a file readable by others", linkTo(0o700, secretKey, 0o644), []string{"group or others", "chmod 600"}},
		{"link to a private file", linkTo(0o700, secretKey, 0o600), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "keys")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "shared.key")
			tt.setup(t, path)
			key, err := LoadKeyFile(path)
			if tt.want == nil {
				if err != nil || !bytes.Equal(key, secretKey) {
					t.Fatalf("LoadKeyFile = %q, %v; want the file's bytes", key, err)
				}
				return
			}
			if err == nil {
				t.Fatal("LoadKeyFile loaded a key; want an error")
			}
			for _, w := range append(tt.want, path) {
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

// linkTo makes the key file a symbolic link to a file of mode perm
// holding key, in a folder of its own of mode dirPerm.
func linkTo(dirPerm os.FileMode, key []byte, perm os.FileMode) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		dir := filepath.Join(t.TempDir(), "real")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "key")
		if err := os.WriteFile(target, key, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(target, perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, dirPerm); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadSealKeyFileUnreadable: a key file this account cannot read is
// refused (root reads any file, so the test needs another account).
func TestLoadSealKeyFileUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file of mode 0000")
	}
	path := filepath.Join(t.TempDir(), "shared.key")
	if err := os.WriteFile(path, secretKey, 0o000); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyFile(path); err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want permission denied naming %s", err, path)
	}
}
