"""Parts every email shares: plain-text tables and the list headers (alerts/delivery/emails.py,
alerts/monthly/send.py)."""

from __future__ import annotations


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell: readable in any mail client's plain-text view."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def headers(unsubscribe: str) -> dict[str, str]:
    return {
        "List-Unsubscribe": f"<{unsubscribe}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "Auto-Submitted": "auto-generated",
    }
