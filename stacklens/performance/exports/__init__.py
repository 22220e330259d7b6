"""Exports of the performance views: CSV and JSON of exactly the tables each dashboard page shows
(``tables``, ``tabular``), and the PDF report of a project and a time window (``report_data``, ``pdf``).
"""
