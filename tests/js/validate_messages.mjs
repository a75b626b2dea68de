// Validate a conversation with the REAL `ai` package, as a useChat server route does
// before it trusts restored messages.
//
//   node tests/js/validate_messages.mjs < history.json
//
// Prints the validated messages as one JSON line and exits 0; on a validation error
// prints it to stderr and exits 1. `ai` resolves from tests/node_modules.
import { validateUIMessages } from "ai";

let input = "";
for await (const chunk of process.stdin) input += chunk;
try {
  const messages = await validateUIMessages({ messages: JSON.parse(input) });
  console.log(JSON.stringify(messages));
} catch (error) {
  console.error(error?.stack ?? String(error));
  process.exit(1);
}
