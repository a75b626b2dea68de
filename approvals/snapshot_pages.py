"""The inbox websocket's snapshot, in frames small enough for any proxy and browser.

A hospital inbox can hold hundreds of cards of up to CONDOR_CARD_ARGS_MAX_BYTES of args
each: one frame would run to megabytes. So the snapshot goes as consecutive frames of at
most SNAPSHOT_FRAME_MAX_BYTES of JSON, every one but the last marked `"more": true`; the
page applies the set only once the last has come (static/inbox/socket.js), so a partial
snapshot never removes a card. A snapshot that fits one frame is the frame it always was.
"""

import json

SNAPSHOT_FRAME_MAX_BYTES = 256 * 1024
_ENVELOPE = len(json.dumps({"type": "snapshot", "cards": [], "more": True}))


def snapshot_frames(cards: list[dict], max_bytes: int = SNAPSHOT_FRAME_MAX_BYTES) -> list[dict]:
    frames, page, size = [], [], _ENVELOPE
    for card in cards:
        card_size = len(json.dumps(card).encode()) + 2  # the separator ", "
        if page and size + card_size > max_bytes:
            frames.append({"type": "snapshot", "cards": page, "more": True})
            page, size = [], _ENVELOPE
        page.append(card)
        size += card_size
    frames.append({"type": "snapshot", "cards": page})
    return frames
