"""What the run spine tells the layers above it, which it does not import.

Sent synchronously, inside the transaction that holds the runs' row locks: a receiver's
writes commit or roll back with the close, and a receiver that raises fails the close.
"""

from django.dispatch import Signal

# Locked active runs are closing, all with one terminal reason (`runs`: Run instances or
# ClosingRun rows; `now`; `include_approved`: a reviewer's stop, which withdraws approved but
# unused grants too; `actor_user` / `actor_client`: who closed them, when someone did).
# The approvals app withdraws their open cards.
run_closing = Signal()

# The outbox drainer is about to push `events` again, long after their commit (`late`: what was
# created before it is the drainer's to send). A receiver returns the pks of the events whose news
# went stale meanwhile, and those stay out of the push. The inbox answers for its cards.
stale_news = Signal()
