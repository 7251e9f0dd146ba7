package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupPath is where connect keeps the host's file as it was.
func BackupPath(path string) string { return path + ".mcpx-fw.bak" }

// Write puts the connected bytes in place of the host's file, keeping its
// bytes from before in the backup: a backup already there is kept (a
// connect of more of the file brings it up to date first, with Rebackup).
// The file is replaced whole (a temporary file renamed over it), with its
// mode kept. The backup is readable by its owner alone (0600), whatever
// the file's mode: it holds the keys and tokens of the host's entries,
// which connect moved into mcpx-fw's config, itself 0600.
func Write(path string, original, connected []byte) error {
	if bytes.Equal(original, connected) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	bak, err := os.OpenFile(BackupPath(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, backupMode)
	switch {
	case errors.Is(err, fs.ErrExist):
		if err := narrow(BackupPath(path)); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		if err := writeClose(bak, original); err != nil {
			return err
		}
	}
	return replace(path, connected, info.Mode().Perm())
}

// Restore puts the backup's bytes back as the host's file and removes the
// backup.
func Restore(path string) error {
	data, err := os.ReadFile(BackupPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: no backup %s: the file was not connected by mcpx-fw", path, BackupPath(path))
	}
	if err != nil {
		return err
	}
	mode := fs.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := replace(path, data, mode); err != nil {
		return err
	}
	return os.Remove(BackupPath(path))
}

// Rebackup replaces the backup with data, the host's file without
// mcpx-fw's entries (Unconnected), before a connect of more of the file,
// at 0600 (a backup that was more open is narrowed).
func Rebackup(path string, data []byte) error {
	if _, err := os.Stat(BackupPath(path)); err != nil {
		return err
	}
	return replace(BackupPath(path), data, backupMode)
}

// narrow makes a backup already there, a regular file, 0600: one kept
// from a connect that wrote it at the file's mode.
func narrow(bak string) error {
	info, err := os.Lstat(bak)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() == backupMode {
		return err
	}
	return os.Chmod(bak, backupMode)
}

// backupMode is the backup's: its owner's alone.
const backupMode fs.FileMode = 0o600

// Put writes data, the file with a scope disconnected, in place of the
// host's file, its mode kept, and removes the backup unless keep: the
// backup goes once no entry is left for it to give back.
func Put(path string, data []byte, keep bool) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := replace(path, data, info.Mode().Perm()); err != nil {
		return err
	}
	if keep {
		return nil
	}
	return os.Remove(BackupPath(path))
}

// Restored is what Restore would put back, for a dry run.
func Restored(path string) ([]byte, error) {
	data, err := os.ReadFile(BackupPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no backup %s: the file was not connected by mcpx-fw", path, BackupPath(path))
	}
	return data, err
}

func replace(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := writeClose(tmp, data); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
