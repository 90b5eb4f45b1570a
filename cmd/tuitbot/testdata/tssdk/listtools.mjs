// Times, with the official TypeScript MCP SDK, what a client such as
// Claude Code or Cursor waits for when it starts an MCP server over stdio:
// spawn and initialize (connect), then listTools. Each argument after the
// first is a JSON array, a command line; they are run one after the other
// for ROUNDS rounds, after one warm-up round that is not counted, and the
// medians are printed as one JSON line per command (milliseconds).
// Usage: node listtools.mjs ROUNDS '["cmd","arg"]' ...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// A command line may start with NAME=value entries, which are set in that
// server's environment only.
function split(argv) {
  const env = { ...process.env };
  let i = 0;
  for (; i < argv.length && /^[A-Z_][A-Z0-9_]*=/.test(argv[i]); i++) {
    const at = argv[i].indexOf("=");
    env[argv[i].slice(0, at)] = argv[i].slice(at + 1);
  }
  return { env, command: argv[i], args: argv.slice(i + 1) };
}

async function once(argv) {
  const { env, command, args } = split(argv);
  const start = performance.now();
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  const client = new Client({ name: "tuitbot-bench", version: "1" });
  await client.connect(transport);
  const connected = performance.now();
  const { tools } = await client.listTools();
  const listed = performance.now();
  await client.close();
  return { connect: connected - start, list: listed - connected, total: listed - start, tools: tools.length };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rounds = Number(process.argv[2]);
const commands = process.argv.slice(3).map((a) => JSON.parse(a));
const samples = commands.map(() => []);
for (let r = -1; r < rounds; r++) {
  for (const [i, argv] of commands.entries()) {
    const s = await once(argv);
    if (r >= 0) samples[i].push(s);
  }
}
for (const [i, argv] of commands.entries()) {
  const s = samples[i];
  console.log(JSON.stringify({
    command: argv.join(" "), tools: s[0].tools,
    connect_ms: median(s.map((x) => x.connect)), list_ms: median(s.map((x) => x.list)), total_ms: median(s.map((x) => x.total)),
  }));
}
