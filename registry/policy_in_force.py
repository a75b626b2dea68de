"""An approved call re-checked against the policy in force (SPEC section 4).

The registry or an egress allow-list may change between the card and the run: a
host taken off a comms tool's list, a tool made comms in a child's session. A
decision that approves a call, a resume and a cold replay each ask the engine
again, for the args that would run, in the session's context as it is now; a
`blocked` verdict (egress.*, comms.child-blocked, any other block) refuses the
use with 409 `policy_changed`, naming the rule. A verdict that now asks for
approval is no block: the call has its approval. The gate's cold replay needs no
call here: the verdict it takes first is this check, and a block settles the call
as blocked before any grant is looked at.

The client's metadata is not asked again: it can only turn a read into a mutate
(SPEC section 2), which decides no block.
"""

from core.errors import PolicyChanged
from registry.models import ToolDescriptor
from registry.policy import Context, Decision, ToolSpec, Verdict, evaluate
from registry.policy import ToolCall as PolicyCall


def registered(tool: str) -> ToolSpec | None:
    """`tool`'s registry row as the engine reads it, as of now (None: no row)."""
    descriptor = ToolDescriptor.objects.filter(name=tool).first()
    return descriptor.to_spec() if descriptor is not None else None


def context_of(run, session) -> Context:
    """The context the engine decides a call of `run` on, from `session` (any object with its fields) as it is now."""
    return Context(autonomy=run.autonomy, tainted=session.tainted, consent=session.consent, age_band=session.age_band)


def blocking_verdict(tool: str, op: str, args: dict, context: Context, registered) -> Verdict | None:
    """The engine's verdict on running `tool` with `args` now, if it blocks; None if the call may still run.

    `registered`: the tool's registry row as a ToolSpec (None: no row), as of now.
    """
    verdict = evaluate(PolicyCall(tool=tool, op=op, args=args), context, registered)
    return verdict if verdict.decision == Decision.BLOCKED else None


def refusal(verdict: Verdict) -> PolicyChanged:
    return PolicyChanged(
        f"The policy in force now blocks this call ({verdict.rule_id}): {verdict.explanation} It may not run."
    )
