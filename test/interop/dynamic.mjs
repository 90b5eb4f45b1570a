// Drives `tuitbot mcp serve --dynamic-toolsets` with the official TypeScript
// SDK client over stdio: the session starts at the default selection and
// the finding tools, find_tools ranks schedule_in_queue first for "schedule
// a post", and enable_toolset schedule sends notifications/tools/list_changed
// after which tools/list includes it. Exits non-zero on any mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { check, serverCommand } from "./common.mjs";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const { bin, args } = serverCommand("dynamic.mjs");

const transport = new StdioClientTransport({ command: bin, args, stderr: "ignore" });
const client = new Client({ name: "interop-dynamic", version: "1.0.0" });
let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
await client.connect(transport);

const names = async () => (await client.listTools()).tools.map((t) => t.name);
const first = await names();
check(first.length <= 30 && ["list_toolsets", "find_tools", "enable_toolset", "x_post_tweet"].every((n) => first.includes(n)),
  `the session starts at the default selection and the finding tools (${first.length} tools)`);
check(!first.includes("schedule_in_queue"), "schedule_in_queue is not listed before its toolset is enabled");

const found = await client.callTool({ name: "find_tools", arguments: { query: "schedule a post" } });
check(found.structuredContent?.data?.tools?.[0]?.name === "schedule_in_queue", "find_tools ranks schedule_in_queue first for \"schedule a post\"");

const enabled = await client.callTool({ name: "enable_toolset", arguments: { name: "schedule" } });
check(enabled.structuredContent?.data?.added?.includes("schedule_in_queue"), "enable_toolset schedule adds schedule_in_queue");
await Promise.race([listChanged, new Promise((_, reject) => setTimeout(() => reject(new Error("no notifications/tools/list_changed")), 10000))]);
check(true, "enable_toolset sent notifications/tools/list_changed");
check((await names()).includes("schedule_in_queue"), "the next tools/list includes schedule_in_queue");

await client.close();
console.log("interop dynamic: all checks passed");
