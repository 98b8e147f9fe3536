"""The run's shared screen files (execution/screen_store.py)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from execution.screen_store import ScreenStore


def test_the_same_bytes_are_stored_once_and_other_bytes_apart(tmp_path: Path) -> None:
    store = ScreenStore(tmp_path / "screens")
    a = store.put(b"<hierarchy>a</hierarchy>", ".xml")
    again = store.put(b"<hierarchy>a</hierarchy>", ".xml")
    b = store.put(b"<hierarchy>b</hierarchy>", ".xml")
    png = store.put(b"<hierarchy>a</hierarchy>", ".png")  # same bytes, another kind of file
    assert a == again and a != b and a.stem == png.stem and a != png
    assert a.read_bytes() == b"<hierarchy>a</hierarchy>" and b.read_bytes() == b"<hierarchy>b</hierarchy>"
    assert sorted(p.name for p in (tmp_path / "screens").iterdir()) == sorted([a.name, b.name, png.name])
    assert (store.written, store.reused) == (3, 1)


def test_a_second_store_on_the_folder_finds_what_the_first_wrote(tmp_path: Path) -> None:
    # as a resumed run, or the other worker process, does
    first = ScreenStore(tmp_path)
    path = first.put(b"x" * 1000, ".png")
    second = ScreenStore(tmp_path)
    assert second.put(b"x" * 1000, ".png") == path and (second.written, second.reused) == (0, 1)


def test_the_known_names_stay_bounded(tmp_path: Path) -> None:
    store = ScreenStore(tmp_path, remember=3)
    for i in range(10):
        store.put(str(i).encode(), ".xml")
    assert len(store._known) <= 3 and len(list(tmp_path.iterdir())) == 10


def _put_many(args: tuple[str, int]) -> list[str]:
    folder, seed = args
    store = ScreenStore(Path(folder))
    # both processes store the same 200 screens, in opposite orders
    order = range(200) if seed == 0 else reversed(range(200))
    return [store.put((f"screen {i} " * 500).encode(), ".xml").name for i in order]


def test_two_processes_storing_the_same_screens_leave_whole_files_and_no_temporaries(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        names = pool.map(_put_many, [(str(tmp_path), 0), (str(tmp_path), 1)])
    assert sorted(names[0]) == sorted(names[1])
    files = sorted(tmp_path.iterdir())
    assert len(files) == 200 and not any(p.name.startswith(".") for p in files)
    assert {p.read_bytes() for p in files} == {(f"screen {i} " * 500).encode() for i in range(200)}
