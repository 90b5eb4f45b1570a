package gateway

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/export"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// TestAuditExportBytes: the audit export of a row whose optional columns
// are all NULL and of one whose text needs quoting, escaping or
// neutralising is exactly these bytes, as CSV and as JSON Lines, with and
// without since: a NULL text is written as an empty string and a NULL
// number as 0.
func TestAuditExportBytes(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		e := newEnv(t)
		insert := `INSERT INTO mutation_audit (correlation_id, idempotency_key, tool_name, params_hash, intent_key, params_summary, status, caller, loop_name,
			result_summary, error_code, error_message, elapsed_ms, duplicate_of, created_at, completed_at, equivalent_tool, decided_by, resolution)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		rows := [][]any{
			{"c-null", nil, "x_post_tweet", "h1", "i1", "{}", "pending", "mcp", "", nil, nil, nil, nil, nil, "2030-01-01T00:00:00.000Z", nil, nil, nil, nil},
			{"c-tricky", "k,1", "x_like_tweet", "h2", "i2", "{\"text\":\"say \\\"hi\\\", then\ngo\"}", "failed", "cli", "naïve 日本 🙂", "=SUM(A1)", "x_error",
				"line one\r\nline \"two\"", int64(-7), "@c-null", "2030-01-01T00:00:01.000Z", "2030-01-01T00:00:02.000Z", " lead", "-me", "+1"},
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			if _, err := e.db.ExecContext(e.ctx, insert, r...); err != nil {
				t.Fatal(err)
			}
			if err := e.db.QueryRowContext(e.ctx, `SELECT id FROM mutation_audit WHERE correlation_id = ?`, r[0]).Scan(&ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]string{
			export.CSV: "id,correlation_id,created_at,completed_at,tool_name,equivalent_tool,status,caller,loop_name,decided_by,params_summary,result_summary," +
				"error_code,error_message,elapsed_ms,approval_id,duplicate_of,idempotency_key,params_hash,resolution\n" +
				fmt.Sprintf("%d,c-null,2030-01-01T00:00:00.000Z,,x_post_tweet,,pending,mcp,,,{},,,,0,0,,,h1,\n", ids[0]) +
				fmt.Sprintf("%d,c-tricky,2030-01-01T00:00:01.000Z,2030-01-01T00:00:02.000Z,x_like_tweet,\" lead\",failed,cli,naïve 日本 🙂,'-me,", ids[1]) +
				"\"{\"\"text\"\":\"\"say \\\"\"hi\\\"\", then\ngo\"\"}\",'=SUM(A1),x_error,\"line one\r\nline \"\"two\"\"\",-7,0,'@c-null,\"k,1\",h2,'+1\n",
			export.JSONL: fmt.Sprintf(`{"id":%d,"correlation_id":"c-null","created_at":"2030-01-01T00:00:00.000Z","completed_at":"","tool_name":"x_post_tweet",`, ids[0]) +
				`"equivalent_tool":"","status":"pending","caller":"mcp","loop_name":"","decided_by":"","params_summary":"{}","result_summary":"","error_code":"",` +
				`"error_message":"","elapsed_ms":0,"approval_id":0,"duplicate_of":"","idempotency_key":"","params_hash":"h1","resolution":""}` + "\n" +
				fmt.Sprintf(`{"id":%d,"correlation_id":"c-tricky","created_at":"2030-01-01T00:00:01.000Z","completed_at":"2030-01-01T00:00:02.000Z",`, ids[1]) +
				`"tool_name":"x_like_tweet","equivalent_tool":" lead","status":"failed","caller":"cli","loop_name":"naïve 日本 🙂","decided_by":"-me",` +
				`"params_summary":"{\"text\":\"say \\\"hi\\\", then\ngo\"}","result_summary":"=SUM(A1)","error_code":"x_error",` +
				`"error_message":"line one\r\nline \"two\"","elapsed_ms":-7,"approval_id":0,"duplicate_of":"@c-null","idempotency_key":"k,1",` +
				`"params_hash":"h2","resolution":"+1"}` + "\n",
		}
		for _, format := range export.Formats() {
			for _, since := range []time.Time{{}, time.Date(2029, 12, 31, 0, 0, 0, 0, time.UTC)} {
				var buf bytes.Buffer
				n, err := export.Write(e.ctx, &buf, export.Request{What: export.Audit, Format: format, Since: since}, e.g.ExportAudit, nil)
				if err != nil || n != 2 {
					t.Fatalf("%s since %v: Write = %d, %v", format, since, n, err)
				}
				if buf.String() != want[format] {
					t.Errorf("%s since %v:\ngot  %q\nwant %q", format, since, buf.String(), want[format])
				}
			}
		}
	})
}
