"""Where every absolute link the service writes points (docs/architecture.md §8): alerts, test messages,
e-mails,
webhooks, Slack, tracker bodies, share and invitation links, DSNs.

One answer for all of them: ``STACKLENS_PUBLIC_URL`` when set (behind a proxy, or when the server listens on
every interface), else the address the server actually listens on. `stacklens serve` and `stacklens up` put
the host and port they bind into the settings they pass down (:func:`serving`), so the API, the dashboards and
the pipeline runs inside the server (alert evaluation and delivery) all build the same links; a process
started apart from the server (a scaled Dagster daemon) has only ``STACKLENS_HOST`` / ``STACKLENS_PORT`` and
should be given ``STACKLENS_PUBLIC_URL``.

Links never come from the request's ``Host`` header: a link written into a message outlives the request, and a
forged header must not put another site's address into an alert or a DSN.
"""

from __future__ import annotations

from stacklens.settings import Settings

# A server that listens on every interface is reached on this machine through loopback.
WILDCARD_HOSTS = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


def served_url(host: str, port: int) -> str:
    """``http://host:port`` of a server listening on ``host:port`` (a wildcard becomes loopback)."""
    shown = WILDCARD_HOSTS.get(host, host)
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def serving(settings: Settings, host: str, port: int) -> Settings:
    """``settings`` of a server bound to ``host:port``: every link built from them points at that address."""
    return settings.model_copy(update={"host": host, "port": port})


def public_base_url(settings: Settings) -> str:
    """The base of every absolute link, without a trailing slash: ``STACKLENS_PUBLIC_URL`` when set, else the
    address served (the settings' host and port, which `stacklens serve` sets to what it binds)."""
    if settings.public_url:
        return settings.public_url  # validated: http(s), no query or fragment, no trailing slash
    return served_url(settings.host, settings.port)


def absolute_link(settings: Settings, path: str) -> str:
    """``path`` (starting with ``/``) on the service's public address."""
    return public_base_url(settings) + path
