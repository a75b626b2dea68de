"""The inbox snapshot in frames of at most 256 KB (issue 14: 500 pending cards)."""

import json

from approvals.snapshot_pages import SNAPSHOT_FRAME_MAX_BYTES, snapshot_frames


def card(i: int, size: int = 15_000) -> dict:
    return {"id": f"card-{i}", "args": {"text": "x" * size}}


def test_five_hundred_large_cards_go_in_frames_under_the_limit_in_order():
    cards = [card(i) for i in range(500)]
    frames = snapshot_frames(cards)
    assert len(frames) > 1
    assert all(len(json.dumps(f).encode()) <= SNAPSHOT_FRAME_MAX_BYTES for f in frames)
    assert [f.get("more") for f in frames] == [True] * (len(frames) - 1) + [None]
    assert [c["id"] for f in frames for c in f["cards"]] == [c["id"] for c in cards]


def test_a_small_snapshot_is_one_frame_as_before():
    assert snapshot_frames([card(1, 10)]) == [{"type": "snapshot", "cards": [card(1, 10)]}]
    assert snapshot_frames([]) == [{"type": "snapshot", "cards": []}]
