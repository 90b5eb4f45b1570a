// What every interop client shares: the binary and its arguments from the
// command line, and a check that stops at the first mismatch.
export function serverCommand(script) {
  const [bin, ...args] = process.argv.slice(2);
  if (!bin) {
    console.error(`usage: node ${script} <tuitbot binary> [args...]`);
    process.exit(2);
  }
  return { bin, args };
}

export function check(cond, msg) {
  if (!cond) {
    console.error("FAIL: " + msg);
    process.exit(1);
  }
  console.log("ok: " + msg);
}
