"""DSNs: the address a Sentry SDK is given, ``http(s)://<app key>@<host>/<project id>`` (docs/architecture.md
§11.4).

The public key of a DSN is the app key itself. App keys are identifiers, not secrets (a browser DSN is in
every page's JavaScript), so the DSN is shown to whoever sees the project's settings and to API-key holders,
as Sentry does. A key whose service name holds ``-`` (allowed before DSNs existed) cannot be a DSN public key:
browser SDKs refuse anything but ``[A-Za-z0-9_]``; it keeps working for the shipper and has no DSN.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.keys.lifecycle import list_app_keys
from stacklens.control.keys.values import KeyDecryptionError, decrypt_value
from stacklens.control.models import AppKey
from stacklens.public_url import public_base_url
from stacklens.settings import Settings

DSN_KEY = re.compile(r"[A-Za-z0-9_]+")
# Stands in for a key that is masked anyway (its place in the DSN is replaced by the masked form).
DSN_PLACEHOLDER_KEY = "key"


def dsn_for(app_key: str, base_url: str, project_id: int) -> str | None:
    """The app key's DSN on the service at ``base_url``; ``None`` for a key a DSN cannot carry."""
    if not DSN_KEY.fullmatch(app_key):
        return None
    parts = urlsplit(base_url.rstrip("/"))
    return f"{parts.scheme}://{app_key}@{parts.netloc}{parts.path}/{project_id}"


def project_dsns(session: Session, project_id: int, settings: Settings) -> dict[int, str | None]:
    """DSN of each current app key of the project, by key id (``None`` where no DSN can be made), on the
    service's public address (:func:`stacklens.public_url.public_base_url`)."""
    base_url = public_base_url(settings)
    rows = session.scalars(select(AppKey).where(AppKey.project_id == project_id, AppKey.revoked_at.is_(None)))
    dsns: dict[int, str | None] = {}
    for row in rows:
        try:
            value = decrypt_value(row.key_encrypted, settings)
        except KeyDecryptionError:  # the server secret changed: the key must be regenerated first
            dsns[row.id] = None
            continue
        dsns[row.id] = dsn_for(value, base_url, project_id)
    return dsns


def masked_dsn(dsn: str | None, masked_key: str) -> str | None:
    """The DSN with its public key (the app key) masked as the key column masks it: a DSN carries the whole
    key, so showing it in full beside a masked key would make the mask pointless."""
    if dsn is None:
        return None
    scheme, _, rest = dsn.partition("://")
    _key, _, host = rest.rpartition("@")
    return f"{scheme}://{masked_key}@{host}"


def primary_masked_dsn(session: Session, project_id: int, settings: Settings) -> str | None:
    """The project's primary DSN, masked as the settings page shows it before Reveal (no key is decrypted):
    what empty states show, so they name the same address and project as the settings page and the API."""
    primary = next((k for k in list_app_keys(session, project_id) if k.service is None), None)
    if primary is None:
        return None
    return masked_dsn(dsn_for(DSN_PLACEHOLDER_KEY, public_base_url(settings), project_id), primary.masked)
