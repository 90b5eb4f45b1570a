package deps

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/google/uuid"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/pressly/goose/v3"
	_ "github.com/spf13/cobra"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/oauth2"
	_ "golang.org/x/text/unicode/norm"
	_ "golang.org/x/time/rate"
	_ "modernc.org/sqlite"
)
