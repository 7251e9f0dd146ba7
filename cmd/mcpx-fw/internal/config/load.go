package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// Load reads path (or mcpx-fw.yaml in the working folder when path is
// empty and that file exists), applies MCPXFW_* environment overrides and
// checks every field, reporting all problems at once, one line each, at
// the line of the file (or the variable) that needs the fix.
func Load(path string) (*Config, error) {
	v := viper.New()
	setDefaults(v)
	v.SetEnvPrefix("MCPXFW")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if path == "" {
		if _, err := os.Stat(DefaultFile); err == nil {
			path = DefaultFile
		}
	}
	p := &problems{file: path}
	if path != "" {
		doc, err := readConfigFile(v, path)
		if err != nil {
			return nil, err
		}
		p.doc = doc
	}
	return decode(v, p)
}

// decode turns viper's settings into a Config and checks it. Unknown keys
// are left to checkFile, and a value that does not decode leaves its key
// at the zero value, so the checks of the rest still run and one run
// names every problem. UnmarshalExact is the backstop: what it refuses is
// refused, in the config's words, even if the checks let it through.
func decode(v *viper.Viper, p *problems) (*Config, error) {
	p.checkFile()
	p.checkEnv(v.AllKeys())
	foreseen := len(p.list)
	var cfg Config
	_ = v.Unmarshal(&cfg, viper.DecodeHook(decodeHooks()))
	cfg.Servers = serversOf(v)
	decodeErr := v.UnmarshalExact(new(Config), viper.DecodeHook(decodeHooks()))
	cfg.path, cfg.doc = p.file, p.doc
	cfg.policyDirGiven = v.InConfig("policy.dir")
	cfg.applyRawServers(p.doc)
	cfg.resolvePaths()
	cfg.verify(p.bad)
	if decodeErr != nil && foreseen == 0 { // what checkFile and checkEnv did not foresee
		p.unforeseen(decodeErr)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	cfg.appendArgs()
	return &cfg, nil
}

// decodeHooks are viper's own (durations, comma-separated lists) plus one
// for revisions: YAML reads an unquoted 2026-07-28 as a date, which a
// string field such as servers.<name>.protocol takes back as written.
func decodeHooks() mapstructure.DecodeHookFunc {
	return mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
		dateAsString,
	)
}

// serversOf decodes each server on its own, keeping what decodes of one
// holding a value that does not: decoding the servers map at once drops a
// server whole when any of its values fails, and the checks of the rest
// of that server would never run.
func serversOf(v *viper.Viper) map[string]Server {
	out := map[string]Server{}
	for name, raw := range v.GetStringMap("servers") {
		var s Server
		if dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
			WeaklyTypedInput: true, DecodeHook: decodeHooks(), Result: &s}); err == nil {
			_ = dec.Decode(raw) // what does not decode is named by checkFile
		}
		out[name] = s
	}
	return out
}

func dateAsString(from, to reflect.Type, data any) (any, error) {
	if t, ok := data.(time.Time); ok && to.Kind() == reflect.String {
		return t.Format(time.DateOnly), nil
	}
	return data, nil
}

// readConfigFile gives viper the file at path and returns its YAML, whose
// nodes know their lines; a file that is not a mapping of keys stops here,
// with what checkFile says of it.
func readConfigFile(v *viper.Viper, path string) (*yaml.Node, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NotFoundError{Path: path}
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	doc, err := parseFile(path, b)
	if err != nil {
		return nil, err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
		p := &problems{file: path, doc: doc}
		p.checkFile()
		// viper's words (YAML's) may quote a value: they are not shown
		return nil, cmp.Or(p.err(), fmt.Errorf("%s: not a mapping of keys such as servers: and policy:", path))
	}
	return doc, nil
}

// NotFoundError is a config file named that is not there. Origin is what
// named it (--config, MCPXFW_CONFIG), set by the command that knows.
type NotFoundError struct {
	Path   string
	Origin string
}

// Error names the file as it was given, with what gave it, and the
// folder a relative path was looked for in.
func (e *NotFoundError) Error() string {
	named := "config " + e.Path
	switch e.Origin {
	case "":
	case "--config":
		named = "--config " + e.Path
	default:
		named = e.Origin + "=" + e.Path
	}
	if filepath.IsAbs(e.Path) {
		return named + ": no such file"
	}
	wd, err := os.Getwd()
	if err != nil {
		return named + ": no such file (relative to the working folder)"
	}
	return fmt.Sprintf("%s: no such file (relative to %s)", named, wd)
}

func displayPath(p string) string {
	if p == "" {
		return "(defaults)"
	}
	return p
}

// resolvePaths makes relative paths relative to the config file's folder,
// so a config works from any working directory.
func (c *Config) resolvePaths() {
	base := "."
	if c.path != "" {
		base = filepath.Dir(c.path)
	}
	if c.Policy.Dir != "" { // "" is the embedded set, not this folder
		c.Policy.Dir = resolve(base, c.Policy.Dir)
	} else if dir := c.besidePolicies(); dir != "" {
		c.Policy.Dir = dir
	}
	if c.Policy.Bundle.Signing.PublicKey != "" {
		c.Policy.Bundle.Signing.PublicKey = resolve(base, c.Policy.Bundle.Signing.PublicKey)
	}
	if c.Policy.Shadow.Dir != "" {
		c.Policy.Shadow.Dir = resolve(base, c.Policy.Shadow.Dir)
	}
	if c.Policy.Shadow.Bundle.Signing.PublicKey != "" {
		c.Policy.Shadow.Bundle.Signing.PublicKey = resolve(base, c.Policy.Shadow.Bundle.Signing.PublicKey)
	}
	if c.StateDir == "" {
		c.StateDir = defaultStateDir()
	} else {
		c.StateDir = resolve(base, c.StateDir)
	}
	if c.Seal.KeyFile != "" {
		c.Seal.KeyFile = resolve(base, c.Seal.KeyFile)
	}
	if c.Metrics.TokenFile != "" {
		c.Metrics.TokenFile = resolve(base, c.Metrics.TokenFile)
	}
	if s := c.DecisionLog.Sink; s != "stderr" && s != "off" && s != "" {
		c.DecisionLog.Sink = resolve(base, s)
	}
	if c.Log.File != "" && c.Log.File != "stderr" { // openSink takes "stderr" as stderr
		c.Log.File = resolve(base, c.Log.File)
	}
	for name, s := range c.Servers {
		if s.Dir != "" {
			s.Dir = resolve(base, s.Dir)
			c.Servers[name] = s
		}
	}
	for _, paths := range [][]string{c.Isolation.Hide, c.Isolation.ReadOnly} {
		for i, p := range paths {
			if p != "" { // empty is an error: check
				paths[i] = resolve(base, expandHome(p))
			}
		}
	}
}

// expandHome replaces a leading ~ (alone or before a /) with the home
// folder, as a shell does; any other path is left as it is, and so is this
// one when there is no home.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	abs, err := filepath.Abs(filepath.Join(base, p))
	if err != nil {
		return p
	}
	return abs
}

func defaultStateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "mcpx-fw")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "mcpx-fw-state")
	}
	return filepath.Join(home, ".local", "state", "mcpx-fw")
}

// StateDirOrigin is what named StateDir, for an error about the folder:
// MCPXFW_STATE_DIR (with its value when that was relative), the line of
// the file that writes state_dir, or the default.
func (c *Config) StateDirOrigin() string {
	if v := os.Getenv("MCPXFW_STATE_DIR"); v != "" {
		if v != c.StateDir {
			return "MCPXFW_STATE_DIR=" + v
		}
		return "MCPXFW_STATE_DIR"
	}
	if lineOf(c.doc, "state_dir") > 0 {
		return "state_dir at " + c.Place("state_dir")
	}
	return "the default: state_dir or MCPXFW_STATE_DIR names another"
}

// Path is the file the config was read from, "" for the defaults alone.
func (c *Config) Path() string { return c.path }

// DisplayPath is Path as errors name it: "(defaults)" when no file was read.
func (c *Config) DisplayPath() string { return displayPath(c.path) }

// Place is where a problem with key (servers.NAME.command) is to be fixed,
// as Load's problems name it: FILE:LINE of the line that writes key, or of
// the nearest section above it; DisplayPath when the file writes neither.
func (c *Config) Place(key string) string {
	if line := lineOf(c.doc, key); line > 0 {
		return fmt.Sprintf("%s:%d", c.path, line)
	}
	return c.DisplayPath()
}

// besidePolicies is the policies folder beside the config file (its
// framework in mcpxfw/) when the config names neither policy.dir nor a
// bundle: a folder of the operator's own there decides, never passed over
// silently for the shipped policies, whose rules may be looser than
// theirs. check and serve's log name the folder in use.
func (c *Config) besidePolicies() string {
	if c.path == "" || c.policyDirGiven || c.Policy.Bundle.URL != "" {
		return ""
	}
	dir := filepath.Join(filepath.Dir(c.path), "policies")
	if fi, err := os.Stat(filepath.Join(dir, "mcpxfw")); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}
