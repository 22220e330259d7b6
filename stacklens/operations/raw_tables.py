"""The raw tables (what ingest writes, the bulk of the disk) with the columns retention and storage figures
use: the row's time (what retention counts from, as the engine's TTL does) and when it was received
(growth)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RawTable:
    name: str
    time: str
    received: str


RAW_TABLES = (
    RawTable("events", "timestamp", "received_at"),
    RawTable("transactions", "timestamp", "received_at"),
    RawTable("spans", "timestamp", "received_at"),
    RawTable("sessions", "started", "received"),
    RawTable("logs", "timestamp", "received"),
    RawTable("replays", "timestamp", "received_at"),
    RawTable("replay_segments", "timestamp", "received_at"),
)
RAW_NAMES = tuple(t.name for t in RAW_TABLES)
COLUMNS = tuple(sorted({c for t in RAW_TABLES for c in (t.time, t.received)}))
