// Drives the tuitbot MCP server with the official TypeScript SDK client over
// stdio: handshake, tools/list, a read tool, a mutation routed to approval,
// prompts and resources (the routed call shows in the pending-approvals
// resource), and an invalid call. Exits non-zero on any mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { check, serverCommand } from "./common.mjs";

const { bin, args } = serverCommand("client.mjs");

const transport = new StdioClientTransport({ command: bin, args, stderr: "ignore" });
const client = new Client({ name: "interop", version: "1.0.0" });
await client.connect(transport);
check(client.getServerVersion()?.name === "tuitbot", "handshake names the server");

const { tools } = await client.listTools();
check(tools.length > 20, `tools/list returned ${tools.length} tools`);
const hints = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
const missing = tools.filter((t) => !hints.every((k) => typeof (t.annotations ?? {})[k] === "boolean")).map((t) => t.name);
check(missing.length === 0, `every tool sets all four hints${missing.length ? " (missing: " + missing.join(", ") + ")" : ""}`);

const me = await client.callTool({ name: "x_get_me", arguments: {} });
check(me.structuredContent?.success === true && !me.isError, "x_get_me succeeds");
check(me.structuredContent.data.username === "tuitbot_demo", "x_get_me reads the sandbox user");

const post = await client.callTool({ name: "x_post_tweet", arguments: { text: "hello from the TypeScript SDK" } });
check(post.structuredContent?.data?.routed_to_approval === true, "x_post_tweet is routed to approval by default");

const { prompts } = await client.listPrompts();
const promptNames = prompts.map((p) => p.name).sort();
const wantPrompts = ["plan_a_thread", "reply_to_mentions_safely", "review_my_pending_approvals"];
check(JSON.stringify(promptNames) === JSON.stringify(wantPrompts), `prompts/list names ${promptNames.join(", ")}`);
const plan = await client.getPrompt({ name: "plan_a_thread", arguments: { topic: "interop testing" } });
const planText = plan.messages?.[0]?.content?.text ?? "";
check(plan.messages?.[0]?.role === "user" && planText.includes("x_post_thread_dry_run") && planText.includes("routed_to_approval"),
  "prompts/get plan_a_thread returns the workflow");

const { resources } = await client.listResources();
const uris = resources.map((r) => r.uri).sort();
const wantURIs = ["tuitbot://approvals/pending", "tuitbot://policy", "tuitbot://today"];
check(JSON.stringify(uris) === JSON.stringify(wantURIs), `resources/list names ${uris.join(", ")}`);
const queue = await client.readResource({ uri: "tuitbot://approvals/pending" });
const queued = JSON.parse(queue.contents?.[0]?.text ?? "{}");
check(queue.contents?.[0]?.mimeType === "application/json" && queued.items?.some((it) => it.tool_name === "x_post_tweet"),
  "resources/read shows the routed post in the pending approvals");
const policy = JSON.parse((await client.readResource({ uri: "tuitbot://policy" })).contents?.[0]?.text ?? "{}");
check(typeof policy.approval_mode === "boolean" && Array.isArray(policy.rules), "resources/read returns the effective policy");

const bad = await client.callTool({ name: "x_like_tweet", arguments: { tweet_id: "not-an-id" } });
check(bad.isError === true && bad.structuredContent?.error?.code === "invalid_input", "bad input gives invalid_input with isError");

await client.close();
console.log("interop: all checks passed");
