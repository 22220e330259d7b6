"""The domain's user-facing errors: one base class, one subclass per kind of answer.

Code under ``stacklens/`` raises these (or a subclass named after its topic, such as
:class:`stacklens.control.errors.AccountError`); each adapter maps the kind once: ``api/errors.py`` to an
HTTP status and the error shape, the dashboards to an error page, ``stacklens.cli.main`` to one line on
stderr. Nobody matches on message text: the class says what happened, the message says it in plain words.
"""

from __future__ import annotations


class StackLensError(Exception):
    """A failure the user can act on; ``str(exc)`` is one plain line that names the field or the record."""


class InvalidInput(StackLensError, ValueError):
    """The request itself is wrong (a field's value, a combination of fields)."""


class NotFound(StackLensError, LookupError):
    """The record does not exist, or it belongs to another organization (the two are not told apart)."""


class Conflict(StackLensError):
    """The request is well-formed but clashes with what exists (a duplicate, an illegal transition)."""


class Forbidden(StackLensError):
    """The caller is known but may not do this."""


class Gone(StackLensError):
    """The record existed but no longer answers (a revoked or expired link)."""


class Unavailable(StackLensError):
    """A store or server the request needs does not answer; retrying later may work."""


class ApplicationNotFound(NotFound):
    """No line of a batch names a project of the organization (the spec's ``Application Not Found``)."""


class TooLarge(InvalidInput):
    """A body, or a part of it, is over a limit; smaller pieces would pass."""


class UnsupportedEncoding(InvalidInput):
    """The body is encoded in a way the service does not read (``Content-Encoding``)."""


class RateLimited(StackLensError):
    """A quota refused the request (429 ``Rate Limited``); retrying after ``retry_after`` seconds may pass.

    ``categories`` are the data categories the refusal covers (empty: every category), ``scope`` whose quota
    it was (``organization`` or ``project``) and ``reason`` the code Relay would give: the Sentry endpoints
    repeat the three in ``X-Sentry-Rate-Limits`` so an SDK backs off only what was refused.
    """

    def __init__(
        self, message: str, retry_after: float, categories: tuple[str, ...], scope: str, reason: str
    ) -> None:
        super().__init__(message)
        self.retry_after = max(1, int(retry_after + 0.999))  # whole seconds, at least one
        self.categories = categories
        self.scope = scope
        self.reason = reason
