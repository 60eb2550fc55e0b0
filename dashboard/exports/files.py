"""Writing an export's rows to a compressed file: CSV (gzip) or Parquet, batch by batch.

Rows arrive from a server-side cursor and leave in batches, so memory stays flat however many
rows a year holds. Both writers return the row count; the CSV ends with the stream's footer.
"""

import gzip
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.db import models

from benchmarks.models import Run, Sample
from benchmarks.money import USD_PLACES

from ..csv_rows import COST_COLUMNS, csv_lines

BATCH = 50_000

# Context columns of a sample row, and how Run columns exported by slug are typed.
_TEXT = pa.string()
_NAMED = {"endpoint", "endpoint_model", "provider", "workload", "vantage"}


def write_csv_gz(path: Path, header: list[str], rows: Iterator[Sequence[Any]]) -> int:
    count = 0
    with gzip.open(path, "wt", encoding="utf-8", newline="", compresslevel=6) as out:
        for line in csv_lines(header, rows):
            out.write(line)
            count += 1
    return count - 2  # the header and the footer


def _arrow_type(name: str) -> pa.DataType:
    if name in _NAMED:
        return _TEXT
    if name == "simulated":
        return pa.bool_()
    if name in ("run", "schedule"):
        return pa.int64()
    if name in COST_COLUMNS:
        return pa.decimal128(18, USD_PLACES)
    model = Sample if name in {f.name for f in Sample._meta.fields} else Run
    if name == "ok":
        return pa.bool_()
    if name == "e2e_ms":
        return pa.float64()
    field = model._meta.get_field(name)
    if isinstance(field, models.DateTimeField):
        return pa.timestamp("us", tz="UTC")
    if isinstance(field, models.BooleanField):
        return pa.bool_()
    if isinstance(field, models.FloatField):
        return pa.float64()
    if isinstance(field, models.IntegerField | models.AutoField | models.ForeignKey):
        return pa.int64()
    if isinstance(field, models.JSONField):
        return _TEXT
    return _TEXT


def write_parquet(path: Path, header: list[str], rows: Iterator[Sequence[Any]]) -> int:
    schema = pa.schema([(name, _arrow_type(name)) for name in header])
    count = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        while batch := list(itertools.islice(rows, BATCH)):
            columns = list(zip(*batch, strict=True))
            arrays = [
                pa.array(_plain(values, field.type), type=field.type)
                for values, field in zip(columns, schema, strict=True)
            ]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            count += len(batch)
    return count


def _plain(values: Sequence[Any], kind: pa.DataType) -> list[Any]:
    if kind == _TEXT:
        return [None if v is None else (v if isinstance(v, str) else str(v)) for v in values]
    return list(values)
