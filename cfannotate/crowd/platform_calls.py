"""One call to a crowd platform, with the `PlatformAction` that logs it finished either way.

The action is written (and committed) before the platform is asked
(`services.platform_action_begin`), so a crash in between leaves a pending row that
says so. `platform_call` finishes it when the call ends:

- with what the platform answered (`PlatformCall.answered`, or the fields set on the
  call), SUCCEEDED, or LOCAL where nothing was sent;
- FAILED with the error's message when the call raised a `CfannotateError`, which goes
  on to the caller;
- FAILED when the platform answered in a shape the provider did not expect (its reading
  of the answer raised KeyError, TypeError, ValueError or AttributeError): the trace goes
  to the log and the caller gets a `PlatformError` that says so in words, not a crash;
- FAILED with the error for anything else, which goes on unchanged.

So no call leaves its action pending once it has ended.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd.models import ActionOutcome, PlatformAction
from cfannotate.crowd.providers.base import ActionResult, PlatformError
from cfannotate.crowd.services import platform_action_finish

logger = logging.getLogger(__name__)

# What a provider's reading of an answer raises when the answer is not the shape the
# platform's documentation gives (a field missing, a list for an object, text for a number).
UNEXPECTED_ANSWER = (KeyError, TypeError, ValueError, AttributeError)


@dataclass
class PlatformCall:
    """What the call logged by `action` got back, written into the action when it ends."""

    action: PlatformAction
    outcome: str = ActionOutcome.SUCCEEDED
    request_id: str = ""
    response: dict = field(default_factory=dict)

    def answered(self, result: ActionResult) -> ActionResult:
        """Record a provider's answer to an approve, reject, bonus, block or places call."""
        self.outcome = ActionOutcome.LOCAL if result.local_only else ActionOutcome.SUCCEEDED
        self.request_id, self.response = result.request_id, result.response
        return result


@contextmanager
def platform_call(action: PlatformAction, *, fix: str = "") -> Iterator[PlatformCall]:
    """Finish `action` when the block that calls the platform ends (see the module).

    `fix` is what the researcher can do when the answer was not understood (the
    `PlatformError`'s one-sentence fix)."""
    call = PlatformCall(action)
    try:
        yield call
    except CfannotateError as error:
        platform_action_finish(action=action, outcome=ActionOutcome.FAILED, error=error.message)
        raise
    except UNEXPECTED_ANSWER as error:
        logger.exception(
            "%s %s: the platform's answer was not understood", action.platform, action.action
        )
        problem = PlatformError(
            f"{action.get_platform_display()} answered in a way cfannotate did not expect "
            f"({error.__class__.__name__}); the server log has the details.",
            fix=fix,
        )
        platform_action_finish(action=action, outcome=ActionOutcome.FAILED, error=problem.message)
        raise problem from None
    except Exception as error:
        platform_action_finish(action=action, outcome=ActionOutcome.FAILED, error=repr(error))
        raise
    platform_action_finish(
        action=action, outcome=call.outcome, request_id=call.request_id, response=call.response
    )
