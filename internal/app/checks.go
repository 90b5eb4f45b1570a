package app

import (
	"context"
	"fmt"
	"os"
)

// extraChecks covers the services outside the database.
func (a *App) extraChecks(ctx context.Context) []Check {
	return []Check{a.tokenCheck(), a.llmCheck(ctx), a.xCheck(ctx)}
}

func (a *App) tokenCheck() Check {
	path := a.Cfg.TokenFile()
	st, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return Check{Name: "token", Status: "not_configured", Message: "no token file; run `tuitbot auth` (or use --sandbox)"}
	case err != nil:
		return Check{Name: "token", Status: "error", Message: err.Error()}
	case st.Mode().Perm()&0o077 != 0:
		return Check{Name: "token", Status: "error", Message: fmt.Sprintf("%s is readable by others; run `chmod 600 %s`", path, path)}
	}
	return Check{Name: "token", Status: "ok", Message: path}
}

func (a *App) llmCheck(ctx context.Context) Check {
	if a.Cfg.LLM.Provider == "" {
		return Check{Name: "llm", Status: "not_configured", Message: "set llm.provider and llm.model to enable content tools"}
	}
	return Check{Name: "llm", Status: "degraded", Message: "provider " + a.Cfg.LLM.Provider + " configured but not reachable from this build"}
}

func (a *App) xCheck(ctx context.Context) Check {
	return Check{Name: "x", Status: "not_configured", Message: "X client not started; run `tuitbot auth` or use --sandbox"}
}
