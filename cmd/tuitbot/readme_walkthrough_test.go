package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkthrough returns the commands of README's sandbox walkthrough (the
// first sh block under "Try the whole loop"), each split into arguments
// the way a shell would, with the binary name and comments removed.
func walkthrough(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "## Try the whole loop")
	if i < 0 {
		t.Fatal("README has no sandbox walkthrough section")
	}
	section := readme[i:]
	start := strings.Index(section, "```sh\n")
	end := strings.Index(section[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the walkthrough has no sh block")
	}
	var cmds [][]string
	for _, line := range strings.Split(section[start+6:start+6+end], "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "./tuitbot ") {
			continue // the build step: the tests run the binary built for them
		}
		args := shellWords(t, strings.TrimPrefix(line, "./tuitbot "))
		cmds = append(cmds, args)
	}
	return cmds
}

// shellWords splits a command line as sh does for the simple forms the
// README uses: words, double-quoted strings, and a trailing # comment.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '"':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '"':
			quoted, inWord = true, true
		case r == '#' && !inWord:
			return out
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// TestREADMESandboxWalkthrough runs README's sandbox walkthrough exactly as
// written, each command its own process: the server is started, an agent
// posts through it and it exits; the human side (list, edit, approve,
// audit) then runs with no server at all; the post is in the world the
// next server sees; and reset starts over.
func TestREADMESandboxWalkthrough(t *testing.T) {
	cmds := walkthrough(t)
	want := []string{"mcp serve --sandbox --toolsets default", "approve list --sandbox", "approve edit 1 --text Edited by a human before it went out. --sandbox",
		"approve approve 1 --sandbox", "audit recent --sandbox", "sandbox reset"}
	var got []string
	for _, c := range cmds {
		got = append(got, strings.Join(c, " "))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("README's walkthrough changed; update this test with it.\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	h := newHome(t)
	const agentText = "An agent's first post through tuitbot."
	var edited string
	for _, args := range cmds {
		switch args[0] {
		case "mcp":
			// The agent's side: connect, post (routed to approval), leave.
			p := startStdio(t, h, args[2:]...)
			p.initialize(t)
			if env := p.post(t, 2, agentText); !strings.Contains(string(env.Data), `"routed_to_approval":true`) {
				t.Fatalf("x_post_tweet was not routed to approval: %+v %s", env.Error, env.Data)
			}
			p.stop(t)
		case "sandbox":
			// Before starting over: the approved post is in the one
			// sandbox world, for the next server.
			p := startStdio(t, h, "--sandbox")
			p.initialize(t)
			wantPosts(t, "the next server", p.timeline(t, 2), edited)
			p.stop(t)
			r := h.ok(t, args...)
			mustContain(t, "sandbox reset", r.stdout, "world.json")
		default:
			r := h.ok(t, args...)
			switch strings.Join(args[:2], " ") {
			case "approve list":
				mustContain(t, "approve list", r.stdout, "#1", "x_post_tweet", agentText)
			case "approve edit":
				edited = args[4]
				// Run as written, the example posts its text: a placeholder
				// would go out as it stands.
				if strings.Contains(edited, "…") || strings.Contains(edited, "...") || len(strings.Fields(edited)) < 3 {
					t.Errorf("README's edit example posts a placeholder: %q", edited)
				}
				mustContain(t, "approve edit", r.stdout, "edited:", edited)
			case "approve approve":
				mustContain(t, "approve approve", r.stdout, "[executed]", edited)
			case "audit recent":
				mustContain(t, "audit recent", r.stdout, "success", "x_post_tweet", "rollback: x_delete_tweet tweet_id=")
			}
		}
	}
}
