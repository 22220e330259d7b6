"""Monitors (cron check-ins, heartbeats, uptime checks): schedules, validation, check-ins, detection driven by
stored deadlines, incidents and their notices, uptime probes. The tables are in
:mod:`stacklens.control.models.monitors`; the probes land in the warehouse table ``monitor_checks``."""
