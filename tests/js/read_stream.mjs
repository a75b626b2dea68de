// Read a Condor run stream with the REAL `ai` client, the way a browser resuming a chat does.
//
//   node tests/js/read_stream.mjs <url> [apiKey] [lastEventId]
//   env READ_STREAM_UNTIL_HEARTBEAT=1  end the body at the server's first heartbeat (optional)
//
// Prints the final UIMessage as one JSON line on stdout and exits 0; on any stream
// error (a chunk the strict 6.0.0 schemas refuse, a non-2xx answer, a dangling
// toolCallId) prints it to stderr and exits 1. A 204 prints `null` (that is what
// reconnectToStream returns for "nothing to resume").
// The heartbeat stop exists because a suspended run's stream stays open (no [DONE] until
// the run is terminal) and the client only finishes when the body closes. The server
// sends a heartbeat only once it has sent every frame it had and waited a whole interval
// for more (runs/stream.py), so cutting the body there loses nothing and waits on no timer.
// `ai` resolves from tests/node_modules (run `npm install` in tests/).
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, apiKey, lastEventId] = process.argv.slice(2);
if (!url) {
  console.error("usage: node read_stream.mjs <url> [apiKey] [lastEventId]");
  process.exit(2);
}
const untilHeartbeat = process.env.READ_STREAM_UNTIL_HEARTBEAT === "1";

const headers = {};
if (apiKey) headers.Authorization = `Api-Key ${apiKey}`;
// reconnectToStream never sends Last-Event-ID itself; a browser EventSource would.
if (lastEventId) headers["Last-Event-ID"] = lastEventId;

let heartbeatStopped = false;

// The body up to (not including) the first SSE comment line, then a clean end.
function endAtHeartbeat(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = "";
  let sent = 0;
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      text += decoder.decode(value, { stream: true });
      const match = /(^|\n\n):/.exec(text);
      const end = match ? match.index + match[1].length : text.length;
      if (end > sent) controller.enqueue(encoder.encode(text.slice(sent, end)));
      sent = end;
      if (match) {
        heartbeatStopped = true;
        controller.close();
        await reader.cancel();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

const transport = new DefaultChatTransport({
  // Without this hook 6.0.0 GETs `${api}/${chatId}/stream`; we want the exact URL.
  prepareReconnectToStreamRequest: () => ({ api: url, headers }),
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    if (!untilHeartbeat || !response.body) return response;
    return new Response(endAtHeartbeat(response.body), {
      status: response.status, statusText: response.statusText, headers: response.headers,
    });
  },
});

let last = null;
try {
  const stream = await transport.reconnectToStream({ chatId: "condor" });
  if (stream === null) {
    console.log("null");
    process.exit(0);
  }
  // terminateOnError: the default (false) swallows chunk validation errors and just
  // ends the iteration, which would hide exactly the drift this harness exists to catch.
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) {
    last = message;
  }
} catch (error) {
  console.error(error?.stack ?? String(error));
  process.exit(1);
}
if (heartbeatStopped) console.error("stopped at the server's heartbeat");
console.log(JSON.stringify(last));
process.exit(0);
