"""The push thread's marks wait for each other (runs/push_marks.py): due after MARK_AFTER_SECONDS, or at MARK_BATCH."""

from runs import push_marks
from runs.push_marks import MARK_AFTER_SECONDS, PendingMarks


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_marks_waiting_are_never_due():
    assert PendingMarks(Clock()).due_in() is None


def test_marks_are_due_once_the_oldest_has_waited_long_enough():
    clock = Clock()
    marks = PendingMarks(clock)
    marks.add([1])
    clock.now += MARK_AFTER_SECONDS / 2
    marks.add([2, 3])  # joins the batch: the oldest decides
    assert marks.due_in() == MARK_AFTER_SECONDS / 2
    clock.now += MARK_AFTER_SECONDS / 2
    assert marks.due_in() <= 0


def test_a_full_batch_is_due_at_once(monkeypatch):
    monkeypatch.setattr(push_marks, "MARK_BATCH", 3)
    marks = PendingMarks(Clock())
    marks.add([1, 2])
    assert marks.due_in() > 0
    marks.add([3])
    assert marks.due_in() == 0


def test_taken_marks_are_handed_over_once_and_the_clock_starts_again():
    clock = Clock()
    marks = PendingMarks(clock)
    marks.add([1, 2])
    clock.now += 2 * MARK_AFTER_SECONDS
    assert marks.take() == [1, 2]
    assert marks.take() == [] and marks.due_in() is None
    marks.add([3])
    assert marks.due_in() == MARK_AFTER_SECONDS
