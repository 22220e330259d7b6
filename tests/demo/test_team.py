"""The demo's team and ownership rule: made once however often `demo.prepare` runs, and the backfill's payment
issue (weeks old) assigned by the pipeline's step as a new one would be, with the rule on record."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import func, select

from demo.team import RULES, ensure_demo_team
from stacklens.control.db import session_scope
from stacklens.control.models import Team
from stacklens.issues.assignees import assignees_of
from stacklens.issues.auto_assign import assign_new_issues, get_rules
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land


def _declined(path: str, days_ago: float) -> dict:
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": time.time() - days_ago * 86400,
        "exception": {
            "values": [
                {
                    "type": "PaymentDeclined",
                    "value": "card ending 0002 declined",
                    "module": "demo_shop.payments",
                    "stacktrace": {
                        "frames": [{"filename": path, "abs_path": f"/srv/{path}", "function": "charge"}]
                    },
                }
            ]
        },
    }


def test_demo_team_and_rule(stores: Settings, org_factory) -> None:
    org = org_factory("Demo", "Demo Project")
    ensure_demo_team(stores, org["project"])
    ensure_demo_team(stores, org["project"])
    (paid,) = land(org["org_id"], org["project_id"], [_declined("demo_shop/payments.py", 20)])
    (other,) = land(org["org_id"], org["project_id"], [_declined("demo_shop/search.py", 20)])
    with session_scope(stores) as session:
        assert session.scalar(select(func.count()).select_from(Team)) == 1
        assert get_rules(session, org["org_id"], org["project_id"]) == RULES
        assert assign_new_issues(session, get_warehouse(stores)).assigned == 1
        found = assignees_of(session, org["org_id"], org["project_id"], [paid["issue_id"], other["issue_id"]])
        assert {k: (v.label, v.rule) for k, v in found.items()} == {
            paid["issue_id"]: ("#payments", "path:demo_shop/payments.py → #payments")
        }
