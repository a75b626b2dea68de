// Read a Condor run stream with the REAL `ai` client, the way a browser resuming a chat does.
//
//   node tests/js/read_stream.mjs <url> [apiKey] [lastEventId]
//   env READ_STREAM_IDLE_MS=<ms>  stop after <ms> without a message update (optional)
//
// Prints the final UIMessage as one JSON line on stdout and exits 0; on any stream
// error (a chunk the strict 6.0.0 schemas refuse, a non-2xx answer, a dangling
// toolCallId) prints it to stderr and exits 1. A 204 prints `null` (that is what
// reconnectToStream returns for "nothing to resume").
// The idle stop exists because a suspended run's stream stays open (no [DONE] until
// the run is terminal) and the client only finishes when the body closes.
// `ai` resolves from tests/node_modules (run `npm install` in tests/).
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, apiKey, lastEventId] = process.argv.slice(2);
if (!url) {
  console.error("usage: node read_stream.mjs <url> [apiKey] [lastEventId]");
  process.exit(2);
}
const idleMs = Number(process.env.READ_STREAM_IDLE_MS || 0);

const headers = {};
if (apiKey) headers.Authorization = `Api-Key ${apiKey}`;
// reconnectToStream never sends Last-Event-ID itself; a browser EventSource would.
if (lastEventId) headers["Last-Event-ID"] = lastEventId;

// reconnectToStream passes no abort signal to fetch, so the idle stop needs our own.
const aborter = new AbortController();
let idleStopped = false;
let timer;
const armIdle = () => {
  if (!idleMs) return;
  clearTimeout(timer);
  timer = setTimeout(() => { idleStopped = true; aborter.abort(); }, idleMs);
};

const transport = new DefaultChatTransport({
  // Without this hook 6.0.0 GETs `${api}/${chatId}/stream`; we want the exact URL.
  prepareReconnectToStreamRequest: () => ({ api: url, headers }),
  fetch: (input, init) => fetch(input, { ...init, signal: aborter.signal }),
});

let last = null;
try {
  armIdle();
  const stream = await transport.reconnectToStream({ chatId: "condor" });
  if (stream === null) {
    console.log("null");
    process.exit(0);
  }
  // terminateOnError: the default (false) swallows chunk validation errors and just
  // ends the iteration, which would hide exactly the drift this harness exists to catch.
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) {
    last = message;
    armIdle();
  }
} catch (error) {
  if (!idleStopped) {
    console.error(error?.stack ?? String(error));
    process.exit(1);
  }
  console.error(`stopped after ${idleMs} ms without an update`);
}
console.log(JSON.stringify(last));
process.exit(0);
