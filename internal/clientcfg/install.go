package clientcfg

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
)

var (
	errNotTOML    = errors.New("not valid TOML")
	errUnsafeEdit = errors.New("cannot edit safely")
)

// Action says what Install or Uninstall did (or, with DryRun, would do).
type Action string

// The actions.
const (
	Installed        Action = "installed"
	Updated          Action = "updated"
	AlreadyInstalled Action = "already installed"
	Removed          Action = "removed"
	NotInstalled     Action = "not installed"
)

// Options select the client, its file and the entry.
type Options struct {
	Client Client
	// Path is the client's config file (Client.ConfigPath).
	Path   string
	Server Server
	// TokenFile is where the HTTP transport's bearer token lives; it is
	// named in notes and in VS Code's prompt, never read.
	TokenFile string
	// DryRun computes the change without writing anything.
	DryRun bool
}

// Result reports a change.
type Result struct {
	Action Action
	Path   string
	// Backup is the copy of the file as it was before the change, when
	// there was a file and it changed.
	Backup string
	// Snippet is the entry in the client's own format, as it was added or
	// removed. It never holds a secret.
	Snippet string
	// Notes are what the user has to do next.
	Notes []string
}

// Install merges the server entry into the client's file.
func Install(o Options) (Result, error) {
	if o.Server.Name == "" {
		return Result{}, errors.New("server entry needs a name")
	}
	orig, existed, err := readConfig(o.Path)
	if err != nil {
		return Result{}, err
	}
	r := Result{Path: o.Path}
	var out []byte
	if o.Client == Codex {
		table, err := codexTable(o.Server)
		if err != nil {
			return Result{}, err
		}
		r.Snippet = table
		out, r.Action, err = installTOML(orig, o, table)
		if err != nil {
			return Result{}, err
		}
	} else {
		out, r.Snippet, r.Action, err = installJSON(orig, o)
		if err != nil {
			return Result{}, err
		}
	}
	if o.Server.HTTP {
		r.Notes = append(r.Notes, o.Client.tokenNote(o.TokenFile))
	}
	if r.Action == AlreadyInstalled || o.DryRun {
		return r, nil
	}
	r.Backup, err = writeConfig(o.Path, out, orig, existed)
	return r, err
}

// Uninstall removes exactly the server entry named o.Server.Name (and, for
// VS Code, the token input it added).
func Uninstall(o Options) (Result, error) {
	if o.Server.Name == "" {
		return Result{}, errors.New("server entry needs a name")
	}
	r := Result{Path: o.Path, Action: NotInstalled}
	orig, existed, err := readConfig(o.Path)
	if err != nil || !existed {
		return r, err
	}
	var out []byte
	if o.Client == Codex {
		doc, err := decodeTOML(orig)
		if err != nil {
			return Result{}, configError(o.Path, fmt.Errorf("%w: %v", errNotTOML, err))
		}
		if _, ok := tomlEntryOf(doc, o.Server.Name); !ok {
			return r, nil
		}
		lines, own, _ := splitOwn(string(orig), o.Server.Name)
		var old bytes.Buffer
		for i, l := range lines {
			if own[i] {
				old.WriteString(l)
			}
		}
		r.Snippet = string(bytes.TrimRight(old.Bytes(), "\n")) + "\n"
		out, _, err = editTOML(orig, o.Server.Name, "")
		if err != nil {
			return Result{}, configError(o.Path, err)
		}
	} else {
		doc, err := parseJSON(orig)
		if err != nil {
			return Result{}, configError(o.Path, err)
		}
		key := o.Client.containerKey()
		servers, _ := doc.vals[key].(*object)
		if servers == nil {
			return r, nil
		}
		entry, ok := servers.get(o.Server.Name)
		if !ok {
			return r, nil
		}
		shown := newObject()
		shownServers := newObject()
		shownServers.set(o.Server.Name, entry)
		shown.set(key, shownServers)
		servers.del(o.Server.Name)
		if len(servers.keys) == 0 {
			doc.del(key)
		}
		if o.Client == VSCode {
			if in, ok := removeVSCodeInput(doc); ok {
				shown.set("inputs", []any{in})
			}
		}
		r.Snippet = string(encodeJSON(shown, "  "))
		out = encodeJSON(doc, detectIndent(orig))
		out = keepFinalNewline(orig, out)
	}
	r.Action = Removed
	if o.DryRun {
		return r, nil
	}
	r.Backup, err = writeConfig(o.Path, out, orig, existed)
	return r, err
}

func installJSON(orig []byte, o Options) (out []byte, snippet string, act Action, err error) {
	doc, err := parseJSON(orig)
	if err != nil {
		return nil, "", "", configError(o.Path, err)
	}
	entry, err := o.Client.jsonEntry(o.Server)
	if err != nil {
		return nil, "", "", err
	}
	key := o.Client.containerKey()
	shown := newObject()
	shownServers := newObject()
	shownServers.set(o.Server.Name, entry)
	shown.set(key, shownServers)

	var servers *object
	switch v, ok := doc.get(key); {
	case !ok:
		servers = newObject()
		doc.set(key, servers)
	default:
		s, isObj := v.(*object)
		if !isObj {
			return nil, "", "", configError(o.Path, fmt.Errorf("%w: %q is not an object", errUnsafeEdit, key))
		}
		servers = s
	}
	old, had := servers.get(o.Server.Name)
	same := had && sameJSON(old, entry)
	servers.set(o.Server.Name, entry)

	if o.Client == VSCode && o.Server.HTTP {
		in := vscodeInput(o.TokenFile)
		shown.set("inputs", []any{in})
		if !setVSCodeInput(doc, in) {
			same = false
		}
	}
	snippet = string(encodeJSON(shown, "  "))
	switch {
	case same:
		return orig, snippet, AlreadyInstalled, nil
	case had:
		act = Updated
	default:
		act = Installed
	}
	out = encodeJSON(doc, detectIndent(orig))
	return keepFinalNewline(orig, out), snippet, act, nil
}

// setVSCodeInput adds or replaces the token input; it reports whether the
// input was already there as wanted.
func setVSCodeInput(doc *object, in *object) bool {
	v, ok := doc.get("inputs")
	arr, isArr := v.([]any)
	if !ok || !isArr {
		doc.set("inputs", []any{in})
		return false
	}
	for i, e := range arr {
		if o, ok := e.(*object); ok && o.vals["id"] == vscodeInputID {
			if sameJSON(o, in) {
				return true
			}
			arr[i] = in
			doc.set("inputs", arr)
			return false
		}
	}
	doc.set("inputs", append(arr, in))
	return false
}

func removeVSCodeInput(doc *object) (*object, bool) {
	arr, ok := doc.vals["inputs"].([]any)
	if !ok {
		return nil, false
	}
	for i, e := range arr {
		if o, ok := e.(*object); ok && o.vals["id"] == vscodeInputID {
			rest := append(append([]any{}, arr[:i]...), arr[i+1:]...)
			if len(rest) == 0 {
				doc.del("inputs")
			} else {
				doc.set("inputs", rest)
			}
			return o, true
		}
	}
	return nil, false
}

func installTOML(orig []byte, o Options, table string) ([]byte, Action, error) {
	doc, err := decodeTOML(orig)
	if err != nil {
		return nil, "", configError(o.Path, fmt.Errorf("%w: %v", errNotTOML, err))
	}
	want, err := decodeTOML([]byte(table))
	if err != nil {
		return nil, "", fmt.Errorf("codex entry: %w", err)
	}
	w, _ := tomlEntryOf(want, o.Server.Name)
	if got, ok := tomlEntryOf(doc, o.Server.Name); ok && sameTOML(got, w) {
		return orig, AlreadyInstalled, nil
	}
	out, existed, err := editTOML(orig, o.Server.Name, table)
	if err != nil {
		return nil, "", configError(o.Path, err)
	}
	if existed {
		return out, Updated, nil
	}
	return out, Installed, nil
}

func sameTOML(a, b any) bool { return reflect.DeepEqual(a, b) }

// configError explains why a file is left alone and what to do instead.
func configError(path string, err error) error {
	return fmt.Errorf("%s: %w; tuitbot leaves the file unchanged (comments, trailing commas and hand-written forms are not rewritten): add the entry by hand, `--print` shows it", path, err)
}

// keepFinalNewline keeps a file that ended without a newline that way.
func keepFinalNewline(orig, out []byte) []byte {
	if len(bytes.TrimSpace(orig)) > 0 && !bytes.HasSuffix(orig, []byte("\n")) {
		return bytes.TrimSuffix(out, []byte("\n"))
	}
	return out
}

// readConfig reads the file; a missing file is an empty one.
func readConfig(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return b, true, nil
}

// writeConfig backs the old file up to path.bak (0600: client configs can
// hold other servers' secrets) and replaces the file atomically, keeping its
// mode; a new file is 0600. A symlinked config (dotfile managers) is
// written through to its target.
func writeConfig(path string, data, orig []byte, existed bool) (backup string, err error) {
	target := path
	mode := fs.FileMode(0o600)
	if existed {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
		st, err := os.Stat(target)
		if err != nil {
			return "", fmt.Errorf("stat %s: %w", target, err)
		}
		mode = st.Mode().Perm()
		backup = path + ".bak"
		if err := writePrivate(backup, orig); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backup, fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return backup, fmt.Errorf("replace %s: %w", path, err)
	}
	return backup, nil
}

// writePrivate writes b to path with mode 0600, also when path existed
// with a wider mode.
func writePrivate(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
