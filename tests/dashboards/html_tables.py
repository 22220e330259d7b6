"""Reads the tables of a rendered page (stdlib html.parser): per table id, its body rows, each cell with its
text and the numbers the performance macros put on it (``data-value``, ``data-samples``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str = ""
    numbers: list[float] = field(default_factory=list)


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[Cell]]] = {}
        self.links: list[dict[str, str]] = []
        self._table: str | None = None
        self._in_body = False
        self._cell: Cell | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if tag == "table" and attr.get("id"):
            self._table = attr["id"]
            self.tables[self._table] = []
        elif tag == "tbody" and self._table:
            self._in_body = True
        elif tag == "tr" and self._table and self._in_body:
            self.tables[self._table].append([])
        elif tag == "td" and self._table and self._in_body:
            self._cell = Cell()
            self.tables[self._table][-1].append(self._cell)
        elif tag == "a" and "download" in attr.get("class", ""):
            self.links.append(attr)
        for name in ("data-value", "data-samples"):
            if self._cell is not None and name in attr:
                self._cell.numbers.append(float(attr[name]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.text += data


def read_page(html: str) -> tuple[dict[str, list[list[Cell]]], list[dict[str, str]]]:
    """The page's tables by id and its download links (their attributes)."""
    parser = _Tables()
    parser.feed(html)
    return parser.tables, parser.links
