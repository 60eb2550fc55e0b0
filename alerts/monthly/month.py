"""A calendar month in the install's TIME_ZONE: its bounds, neighbours and names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from django.utils import timezone

_SLUG = re.compile(r"^(\d{4})-(\d{2})$")


@dataclass(frozen=True, slots=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Month:
        """From "yyyy-mm"; raises ValueError for anything else (or a month out of 1–12)."""
        match = _SLUG.match(text or "")
        if not match or not 1 <= int(match[2]) <= 12 or not 1970 <= int(match[1]) <= 9998:
            raise ValueError(f"a month is written yyyy-mm (got {text[:20]!r})")
        return cls(int(match[1]), int(match[2]))

    @classmethod
    def of(cls, moment: datetime) -> Month:
        local = timezone.localtime(moment)
        return cls(local.year, local.month)

    @classmethod
    def last_complete(cls, now: datetime | None = None) -> Month:
        """The newest month that has ended (in TIME_ZONE) at `now`."""
        return cls.of(now or timezone.now()).previous

    @property
    def previous(self) -> Month:
        return Month(self.year - 1, 12) if self.month == 1 else Month(self.year, self.month - 1)

    @property
    def next(self) -> Month:
        return Month(self.year + 1, 1) if self.month == 12 else Month(self.year, self.month + 1)

    @property
    def start(self) -> datetime:
        """Midnight on the 1st, in TIME_ZONE (aware)."""
        return datetime(self.year, self.month, 1, tzinfo=timezone.get_default_timezone())

    @property
    def end(self) -> datetime:
        """The next month's start: the window is [start, end)."""
        return self.next.start

    @property
    def first_day(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def slug(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def label(self) -> str:
        return date(self.year, self.month, 1).strftime("%B %Y")

    def __str__(self) -> str:
        return self.slug
