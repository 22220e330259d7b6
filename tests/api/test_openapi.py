"""The OpenAPI document matches the server: schemathesis generates requests from it for every operation
(in process, with the organization's API key) and no answer is a 5xx or a status the document does not
list. Bounded: a few examples per operation, so the whole run takes seconds."""

from __future__ import annotations

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import status_code_conformance

from api.app import create_app
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import reveal_api_key
from stacklens.settings import Settings

EXAMPLES_PER_OPERATION = 15
# The operations on the organization's API key (regenerate, next): the only ones that change it.
KEY_PATHS = "/api/keys/api"


@pytest.fixture
def stores(settings: Settings) -> Settings:
    from stacklens.control.db import migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    migrate_control_store(settings)
    apply_migrations(settings)
    return settings


def test_validation_errors_are_400_in_the_document_and_the_answer(stores, make_org) -> None:
    client = TestClient(create_app(stores))
    document = client.get("/openapi.json").json()
    statuses = {
        status for item in document["paths"].values() for op in item.values() for status in op["responses"]
    }
    assert "422" not in statuses and "400" in statuses
    assert "HTTPValidationError" not in document["components"]["schemas"]
    org = make_org()
    answer = client.get(
        "/api/activity", params={"limit": "many"}, headers={"Authorization": f"Bearer {org['api_key']}"}
    )
    assert (
        answer.status_code == 400
        and answer.json()["error"] == "Bad Request"
        and "limit" in answer.json()["detail"]
    )


def test_schema_driven_requests_find_no_5xx_and_no_undocumented_status(stores, make_org) -> None:
    org = make_org()
    with session_scope(stores) as session:
        from stacklens.control.accounts import set_quota

        # Generated requests come fast; the per-second limit would turn most of them into (documented) 429s.
        set_quota(session, org["org_id"], requests_per_second=100_000)
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(stores))

    def current_key() -> str:
        with session_scope(stores) as session:
            return reveal_api_key(session, org["org_id"], None)

    # Regenerating the key is one of the operations: every request sends the key that is current. Read once
    # per operation, and again after each request of an operation on the API key: a read for each of the
    # ~1,500 requests (a query, a decryption and an activity row) was a tenth of the test's CPU.
    key = current_key()
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case) -> None:
            nonlocal key
            try:
                case.call_and_validate(
                    headers={"Authorization": f"Bearer {key}"},
                    checks=[not_a_server_error, status_code_conformance],
                )
            finally:
                if case.operation.path.startswith(KEY_PATHS):
                    key = current_key()

        try:
            run()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - schemathesis raises exception groups; report them all
            failures.append(f"{operation.label}: {str(exc)[:400]}")
        # Only the API key's own operations change it: any other that did would have had its later requests
        # sent with a stale key.
        if not operation.path.startswith(KEY_PATHS):
            assert current_key() == key, f"{operation.label} changed the API key"
    assert failures == [], "\n\n".join(failures)


def test_the_document_declares_the_bearer_scheme_where_the_key_is_read(stores, make_org) -> None:
    client = TestClient(create_app(stores))
    document = client.get("/openapi.json").json()
    assert document["components"]["securitySchemes"]["ApiKey"] == {
        **document["components"]["securitySchemes"]["ApiKey"],
        "type": "http",
        "scheme": "bearer",
    }
    operations = {
        (method.upper(), path): op for path, item in document["paths"].items() for method, op in item.items()
    }
    required = [{"ApiKey": []}]
    for key in (
        ("GET", "/api/auth/verify"),
        ("GET", "/api/activity"),
        ("GET", "/api/projects"),
        ("POST", "/api/keys/api/next"),
        ("GET", "/api/alerts/rules"),
    ):
        assert operations[key].get("security") == required, key
    # The health check takes the key optionally; the Sentry endpoints authenticate with an app key instead.
    assert operations[("GET", "/api/health")]["security"] == [{"ApiKey": []}, {}]
    assert "security" not in operations[("POST", "/api/{project_id}/envelope/")]
    assert operations[("POST", "/api/ingest")]["security"] == [{"ApiKey": []}]  # the shipper's API key
    # Every operation with the requirement refuses a request without the key: the scheme is the truth.
    org = make_org()
    secured = [key for key, op in operations.items() if op.get("security") == required]
    assert len(secured) >= 30
    for method, path in secured:
        if "{" in path:
            continue
        answer = client.request(method, path)
        assert answer.status_code == 401 and answer.json()["error"] == "Invalid API Key", (method, path)
    assert (
        client.get("/api/auth/verify", headers={"Authorization": f"Bearer {org['api_key']}"}).status_code
        == 200
    )


def json_answers_without_schema(document: dict) -> list[str]:
    """The operations whose 2xx answer is JSON without a schema (a bare ``JSONResponse`` with no model)."""
    missing = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status in ("200", "201"):
                answer = operation["responses"].get(status)
                if answer is None:
                    continue
                content = answer.get("content", {})
                if "application/json" in content and not content["application/json"].get("schema"):
                    missing.append(f"{method.upper()} {path}")
                break
    return missing


def test_every_json_answer_has_a_schema(stores) -> None:
    document = TestClient(create_app(stores)).get("/openapi.json").json()
    assert json_answers_without_schema(document) == []
    # The check sees an operation that answers JSON with no schema.
    planted = {
        "paths": {"/x": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {}}}}}}}}
    }
    assert json_answers_without_schema(planted) == ["GET /x"]
