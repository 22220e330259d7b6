"""The service watching itself: its operators (every organization's owners, through the organization's alert
channels) hear when ingest is refused (disk below its floor, the front door's queue full), when events are
accepted but not visible for more than a minute, and when the pipelines fail three ticks in a row.

:mod:`~stacklens.self_watch.episodes` holds the words and the once-per-episode rule (shared by every process
through the control store); :mod:`~stacklens.self_watch.watcher` is the thread `stacklens serve` runs to watch
ingest; :mod:`~stacklens.self_watch.pipeline_ticks` counts the schedule runner's failed ticks.
"""
