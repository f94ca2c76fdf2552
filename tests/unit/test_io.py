"""fairppl.core.io.atomic_dir: a folder is written aside and swapped into place whole, or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from fairppl.core.io import atomic_dir


def tree(folder) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> text)."""
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture
def umask_027():
    before = os.umask(0o027)
    yield 0o027
    os.umask(before)


def test_success_replaces_the_old_folder_whole(tmp_path, umask_027):
    target = tmp_path / "model"
    (target / "sub").mkdir(parents=True)
    (target / "old.txt").write_text("old")
    (target / "sub" / "deep.txt").write_text("deep")
    with atomic_dir(target) as tmp:
        assert tmp.parent == tmp_path
        assert tmp.name.startswith(".model.") and tmp.name.endswith(".part")
        assert tree(tmp) == {}
        assert tree(target) == {"old.txt": "old", "sub/deep.txt": "deep"}  # still the old one
        (tmp / "new.txt").write_text("new")
    assert tree(target) == {"new.txt": "new"}  # no file of the old folder survives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no .part or .old left
    assert stat.S_IMODE(target.stat().st_mode) == 0o750  # 0777 less the umask, not mkdtemp's 0700


def test_an_exception_leaves_the_old_folder_untouched(tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "old.txt").write_text("old")
    mode = stat.S_IMODE(target.stat().st_mode)
    with pytest.raises(RuntimeError, match="killed half-way"):
        with atomic_dir(target) as tmp:
            (tmp / "new.txt").write_text("half")
            raise RuntimeError("killed half-way")
    assert tree(target) == {"old.txt": "old"}
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_an_exception_on_a_new_path_leaves_nothing(tmp_path):
    target = tmp_path / "deeper" / "model"
    with pytest.raises(ValueError):
        with atomic_dir(target) as tmp:
            (tmp / "x").write_text("x")
            raise ValueError
    assert not target.exists()
    assert list((tmp_path / "deeper").iterdir()) == []  # the parent is made, nothing in it


def test_a_file_in_the_way_is_replaced_by_the_folder(tmp_path, umask_027):
    target = tmp_path / "model"
    target.write_text("a stray file")
    with atomic_dir(target) as tmp:
        (tmp / "config.json").write_text("{}")
    assert target.is_dir()
    assert tree(target) == {"config.json": "{}"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
